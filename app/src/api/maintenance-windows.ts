/** Maintenance windows (`/v1/maintenance-windows`): planned work during which checks pause and alerts hold. */
import { api, getAllPages, path } from './client.js';
import type { MaintenanceWindow } from './schemas.js';

/** What the form sends to create a window (`POST /v1/maintenance-windows`; docs/api.md, "Maintenance windows"). */
export type NewMaintenanceWindow = {
  name: string;
  /** Wall times in `timezone` (`2026-03-29T02:00`), as the date and time fields give them. */
  startsAt: string;
  endsAt: string;
  timezone: string;
  repeatUnit: 'DAY' | 'WEEK' | 'MONTH' | null;
  repeatInterval: number | null;
  /** The last date an occurrence may start on (`2026-12-31`), or null: forever. */
  repeatEndsAt: string | null;
  tags: string[];
  /** Cover every check of the account. */
  pauseAllChecks?: boolean;
  pauseRuns: boolean;
  silenceAlerts: boolean;
};

/** Every maintenance window of the account (`GET /v1/maintenance-windows`, all pages). */
export const listMaintenanceWindows = (signal?: AbortSignal) =>
  getAllPages<MaintenanceWindow>('/v1/maintenance-windows', {}, signal);

/** Creates a window; answers it. */
export const createMaintenanceWindow = (body: NewMaintenanceWindow) =>
  api.post<MaintenanceWindow>('/v1/maintenance-windows', body);

/** Deletes a window (`DELETE /v1/maintenance-windows/{id}`). */
export const deleteMaintenanceWindow = (id: number) => api.delete(path`/v1/maintenance-windows/${id}`);
