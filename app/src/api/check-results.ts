/** Check results (`/v1/check-results`), their artifacts, and the check's error groups and alerts. */
import { api, getAllPages, path } from './client.js';
import type { CheckAlert, CheckResultResponse, ErrorGroup } from './schemas.js';

/** The newest `limit` results of a check (list items: no logs, no HTTP bodies). */
export const listRecentResults = (checkId: string, limit: number, signal?: AbortSignal) =>
  api.get<CheckResultResponse[]>(path`/v1/check-results/${checkId}`, { limit }, signal);

/** Every result of a check between `from` and `to` (ISO 8601), at most `maxPages` pages of 100. */
export const listResultsBetween = (
  checkId: string,
  window: { from: string; to: string },
  signal: AbortSignal,
  maxPages: number,
) => getAllPages<CheckResultResponse>(path`/v1/check-results/${checkId}`, window, signal, maxPages);

/** One result of a check in full: logs, HTTP bodies and check-type parts included. */
export const getResult = (checkId: string, resultId: string, signal?: AbortSignal) =>
  api.get<CheckResultResponse>(path`/v1/check-results/${checkId}/${resultId}`, undefined, signal);

/** Path of `GET /v1/check-results/{checkId}/{resultId}/artifacts/{name}`: the download of one artifact. */
export const artifactUrl = (checkId: string, resultId: string, name: string): string =>
  path`/v1/check-results/${checkId}/${resultId}/artifacts/${name}`;

/** The newest `limit` error groups of a check: its failures grouped by error message. */
export const listErrorGroups = (checkId: string, limit: number, signal?: AbortSignal) =>
  api.get<ErrorGroup[]>(path`/v1/error-groups/checks/${checkId}`, { limit }, signal);

/** The newest `limit` alerts of a check (its state changes that alerted). */
export const listCheckAlerts = (checkId: string, limit: number, signal?: AbortSignal) =>
  api.get<CheckAlert[]>(path`/v1/check-alerts/${checkId}`, { limit }, signal);
