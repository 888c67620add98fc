/**
 * Analytics' enumerations, in a leaf module (import-free) so its schemas (schemas.ts) and the web app can use
 * them without the query engine.
 */

/** Dimensions a query may group series by (`groupBy`), and the column each reads. */
export const GROUP_COLUMNS = { runLocation: 'run_location', statusCode: 'status_code' } as const;
/** A key of GROUP_COLUMNS. */
export type GroupBy = keyof typeof GROUP_COLUMNS;

/** `quickRange` values; default `last24Hours`. */
export const QUICK_RANGES = [
  'last24Hours',
  'last7Days',
  'last30Days',
  'thisWeek',
  'thisMonth',
  'lastWeek',
  'lastMonth',
] as const;
