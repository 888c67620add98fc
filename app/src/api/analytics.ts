/** Aggregated metrics of API and URL checks (`/v1/analytics/api-checks/{id}`, docs/api.md "Analytics"). */
import { api, path } from './client.js';
import type { Analytics } from './schemas.js';

type AnalyticsQuery = {
  from: string;
  to: string;
  metrics: string;
  groupBy?: string;
  aggregationInterval?: number;
  limit?: number;
};

/** The metrics of one API or URL check over `query.from`…`query.to` (ISO 8601), grouped by `aggregationInterval` (minutes). */
export const getApiCheckAnalytics = (checkId: string, query: AnalyticsQuery, signal?: AbortSignal) =>
  api.get<Analytics>(path`/v1/analytics/api-checks/${checkId}`, query, signal);
