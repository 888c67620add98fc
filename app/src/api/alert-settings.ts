/** The account's alert settings (`/v1/alert-settings`): what checks with `useGlobalAlertSettings` follow. */
import { api } from './client.js';
import type { AlertSettings } from './schemas.js';

/** The account's alert settings, defaults filled in (`GET /v1/alert-settings`). */
export const getAlertSettings = (signal?: AbortSignal) =>
  api.get<AlertSettings>('/v1/alert-settings', undefined, signal);

/** Replaces the account's alert settings (`PUT /v1/alert-settings`); answers them as stored. */
export const putAlertSettings = (settings: AlertSettings) =>
  api.put<AlertSettings>('/v1/alert-settings', settings);
