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

export const getApiCheckAnalytics = (checkId: string, query: AnalyticsQuery, signal?: AbortSignal) =>
  api.get<Analytics>(path`/v1/analytics/api-checks/${checkId}`, query, signal);
