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
