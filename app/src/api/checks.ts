/** Checks (`/v1/checks`, docs/api.md "Checks") and their live statuses (`/v1/check-statuses`). */
import { api, path } from './client.js';
import type { Check, CheckStatus, ExpiredRun } from './schemas.js';

/** A check as the create and update routes answer it; a heartbeat monitor's has its `pingUrl`. */
export type SavedCheck = Check & { pingUrl?: string };

/** Every check of the account; a conditional GET (`api.poll`): unchanged, the same array as last time. */
export const listChecks = (signal?: AbortSignal) => api.poll<Check[]>('/v1/checks', signal);

/** One check by id, with its type's own fields (`GET /v1/checks/{id}`). */
export const getCheck = (checkId: string, signal?: AbortSignal) =>
  api.get<SavedCheck>(path`/v1/checks/${checkId}`, undefined, signal);

/**
 * Creates a check of the type whose create route ends in `typePath` (`api`, `multistep`, …).
 * `autoAssignAlerts: false`: subscribed to the channels in the body only.
 */
export const createCheck = (typePath: string, body: unknown, query?: { autoAssignAlerts: boolean }) =>
  api.post<SavedCheck>(path`/v1/checks/${typePath}`, body, query);

/** Replaces a check's fields (`PUT`: the fields given; the rest keep their stored values). */
export const updateCheck = (checkId: string, body: unknown) =>
  api.put<SavedCheck>(path`/v1/checks/${checkId}`, body);

/** Deletes a check (`DELETE /v1/checks/{id}`). */
export const deleteCheck = (checkId: string) => api.delete(path`/v1/checks/${checkId}`);

/** The status of every check; a conditional GET (`api.poll`): unchanged, the same array as last time. */
export const listCheckStatuses = (signal?: AbortSignal) =>
  api.poll<CheckStatus[]>('/v1/check-statuses', signal);

/** The first `limit` checks of the account, oldest first (`GET /v1/checks?limit=`, at most 100). */
export const listFirstChecks = (limit: number, signal?: AbortSignal) =>
  api.get<Check[]>('/v1/checks', { limit }, signal);

/** The statuses of the checks of `checkIds` (at most 500), by name (`GET /v1/check-statuses?checkId=`). */
export const listCheckStatusesOf = (checkIds: readonly string[], signal?: AbortSignal) =>
  api.get<CheckStatus[]>('/v1/check-statuses', { checkId: checkIds }, signal);

/** The status of one check (`GET /v1/check-statuses/{id}`). */
export const getCheckStatus = (checkId: string, signal?: AbortSignal) =>
  api.get<CheckStatus>(path`/v1/check-statuses/${checkId}`, undefined, signal);

/**
 * One kept ping of a heartbeat monitor, as `GET /v1/checks/{id}/heartbeat-pings` answers it (docs/heartbeats.md,
 * "Pinging"): `kind` `success`, `start` or `fail`; `exitCode` when the ping ended in one; the request's method,
 * source address and user agent (null when unknown); the first 10 000 bytes of its body; `receivedAt` ISO 8601.
 */
export type HeartbeatPing = {
  id: number;
  kind: string;
  exitCode: number | null;
  method: string;
  remoteAddress: string | null;
  userAgent: string | null;
  body: string | null;
  bodySizeBytes: number;
  receivedAt: string;
};

/** A heartbeat monitor's last 100 pings, newest first (`GET /v1/checks/{id}/heartbeat-pings`). */
export const listHeartbeatPings = (checkId: string, signal?: AbortSignal) =>
  api.get<HeartbeatPing[]>(path`/v1/checks/${checkId}/heartbeat-pings`, undefined, signal);

/** The latest `limit` runs of a check that ended without running, newest first, with the reason. */
export const listExpiredRuns = (checkId: string, limit: number, signal?: AbortSignal) =>
  api.get<ExpiredRun[]>(path`/v1/checks/${checkId}/expired-runs`, { limit, page: 1 }, signal);
