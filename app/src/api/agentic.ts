/** AGENTIC checks' script changes and model usage (docs/api.md, "Agentic checks"). */
import { api, path } from './client.js';
import type { AgenticRepair, AgenticUsage } from './schemas.js';

/** The check's script changes, newest first (`GET /v1/checks/{id}/agentic-repairs`, at most 100). */
export const listRepairs = (checkId: string, signal?: AbortSignal) =>
  api.get<AgenticRepair[]>(path`/v1/checks/${checkId}/agentic-repairs`, undefined, signal);

/**
 * Applies or rejects a PENDING repair; answers the repair as decided.
 * @throws ApiError 409 when it is not PENDING or the script moved since it was made.
 */
export const decideRepair = (checkId: string, repairId: string, decision: 'apply' | 'reject') =>
  api.post<AgenticRepair>(path`/v1/checks/${checkId}/agentic-repairs/${repairId}/${decision}`);

/** The account's AGENTIC runs and model usage in `month` (`YYYY-MM`, UTC). */
export const getAgenticUsage = (month: string, signal?: AbortSignal) =>
  api.get<AgenticUsage>('/v1/agentic-usage', { month }, signal);
