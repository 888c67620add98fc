/** Check sessions (`/v1/check-sessions`): runs started by hand, and waiting for them to finish. */
import { api, path } from './client.js';
import type { CheckSession } from './schemas.js';

/** Runs one check now in each of its locations: one session per check. */
export const triggerCheck = (checkId: string) =>
  api.post<{ sessions: CheckSession[] }>('/v1/check-sessions/trigger', { target: { checkId: [checkId] } });

/** One check session by id, finished or not (`GET /v1/check-sessions/{id}`). */
export const getSession = (sessionId: string, signal?: AbortSignal) =>
  api.get<CheckSession>(path`/v1/check-sessions/${sessionId}`, undefined, signal);

/**
 * The session once finished, waiting at most `maxWaitSeconds`.
 * @throws ApiError 408 when it is still running then.
 */
export const awaitSession = (sessionId: string, maxWaitSeconds: number, signal?: AbortSignal) =>
  api.get<CheckSession>(path`/v1/check-sessions/${sessionId}/completion`, { maxWaitSeconds }, signal);

/**
 * Runs a check's content once without saving it (`POST /v1/check-sessions/test/{typePath}`, the body of
 * `POST /v1/checks/{typePath}`): a session whose result is kept for an hour and recorded nowhere else.
 * `fromCheckId`: the saved check the form edits, whose secrets the body sends back masked.
 * @throws ApiError 400 naming the field, as creating the check would (`locations` when no agent serves one).
 */
export const testRunCheck = (typePath: string, body: unknown, fromCheckId?: string) =>
  api.post<CheckSession>(
    path`/v1/check-sessions/test/${typePath}`,
    body,
    fromCheckId === undefined ? undefined : { checkId: fromCheckId },
  );
