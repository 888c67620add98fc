/** Lists the check form offers choices from: runtimes (`/v1/runtimes`) and snippets (`/v1/snippets`). */
import { api, getAllPages } from './client.js';
import type { Runtime, Snippet } from './schemas.js';

/** The runtimes browser and multi-step checks can run on (`GET /v1/runtimes`). */
export const listRuntimes = (signal?: AbortSignal) => api.get<Runtime[]>('/v1/runtimes', undefined, signal);

/** Every code snippet of the account (all pages of `GET /v1/snippets`). */
export const listSnippets = (signal?: AbortSignal) => getAllPages<Snippet>('/v1/snippets', {}, signal);
