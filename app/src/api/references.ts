/** Lists the check form offers choices from: runtimes (`/v1/runtimes`) and snippets (`/v1/snippets`). */
import { api, getAllPages } from './client.js';
import type { Runtime, Snippet } from './schemas.js';

export const listRuntimes = (signal?: AbortSignal) => api.get<Runtime[]>('/v1/runtimes', undefined, signal);

export const listSnippets = (signal?: AbortSignal) => getAllPages<Snippet>('/v1/snippets', {}, signal);
