/** Alert channels (`/v1/alert-channels`) and their notifications (`/v1/alert-notifications`, docs/alerting.md). */
import { api, getAllPages, path } from './client.js';
import type { AlertChannel, AlertNotification } from './schemas.js';

/** Every alert channel of the account (all pages of `GET /v1/alert-channels`). */
export const listAlertChannels = (signal?: AbortSignal) =>
  getAllPages<AlertChannel>('/v1/alert-channels', {}, signal);

/** One alert channel by id (`GET /v1/alert-channels/{id}`). */
export const getAlertChannel = (channelId: string | number, signal?: AbortSignal) =>
  api.get<AlertChannel>(path`/v1/alert-channels/${channelId}`, undefined, signal);

/** Creates an alert channel from its type and config; answers the saved channel. */
export const createAlertChannel = (body: unknown) => api.post<AlertChannel>('/v1/alert-channels', body);

/** Changes a channel: its config, or only its `subscriptions`. */
export const updateAlertChannel = (channelId: string | number, body: unknown) =>
  api.put<AlertChannel>(path`/v1/alert-channels/${channelId}`, body);

/** Deletes an alert channel (`DELETE /v1/alert-channels/{id}`). */
export const deleteAlertChannel = (channelId: string | number) =>
  api.delete(path`/v1/alert-channels/${channelId}`);

/** Sends a test notification and waits up to `maxWaitSeconds` for its outcome. */
export const testAlertChannel = (channelId: string | number, maxWaitSeconds: number) =>
  api.post<AlertNotification>(path`/v1/alert-channels/${channelId}/test`, undefined, { maxWaitSeconds });

/** One page of a channel's notifications, newest first; `state` filters. */
export const listNotifications = (
  query: { alertChannelId: number; limit: number; page: number; state?: string },
  signal?: AbortSignal,
) => api.get<AlertNotification[]>('/v1/alert-notifications', query, signal);
