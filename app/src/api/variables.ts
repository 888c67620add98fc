/** Account environment variables (`/v1/variables`), addressed by their `key`. */
import { api, getAllPages, path } from './client.js';
import type { Variable } from './schemas.js';

/** The fields a variable is created or replaced with (docs/api.md, "Environment variable"). */
export type VariableFields = { key: string; value: string; locked: boolean; secret: boolean };

/** Every variable of the account, by key (all pages of `GET /v1/variables`); a secret one reads `*****`. */
export const listVariables = (signal?: AbortSignal) => getAllPages<Variable>('/v1/variables', {}, signal);

/** Creates a variable (`POST /v1/variables`); answers it as listed (a secret value masked). */
export const createVariable = (body: VariableFields) => api.post<Variable>('/v1/variables', body);

/**
 * Replaces variable `key`'s value and flags (`PUT /v1/variables/{key}`); a secret's mask `*****` sent as the
 * value keeps the stored value.
 */
export const updateVariable = (key: string, body: Omit<VariableFields, 'key'>) =>
  api.put<Variable>(path`/v1/variables/${key}`, body);

/** Deletes variable `key` (`DELETE /v1/variables/{key}`). */
export const deleteVariable = (key: string) => api.delete(path`/v1/variables/${key}`);
