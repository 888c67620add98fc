/** Code snippets (`/v1/snippets`): setup and teardown scripts API checks and check groups share. */
import { api, path } from './client.js';
import type { Snippet } from './schemas.js';

export { listSnippets } from './references.js';

/** Creates a snippet from `{ name, script }` (`POST /v1/snippets`); answers it. */
export const createSnippet = (body: { name: string; script: string }) =>
  api.post<Snippet>('/v1/snippets', body);

/** Changes a snippet's name and script (`PUT /v1/snippets/{id}`); answers it. */
export const updateSnippet = (id: number, body: { name: string; script: string }) =>
  api.put<Snippet>(path`/v1/snippets/${id}`, body);

/** Deletes a snippet (`DELETE /v1/snippets/{id}`); 409 `OUTPOST_ERR_SNIPPET_IN_USE` while checks or groups use it. */
export const deleteSnippet = (id: number) => api.delete(path`/v1/snippets/${id}`);
