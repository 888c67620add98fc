import { Value } from '@sinclair/typebox/value';
import { ApiRequestBodySchema } from '../../src/service/checks/types/api.js';

/** An API request as jobs carry it: the service's defaults (the create schema's) with `overrides` on top. */
export function apiRequest(url: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return Value.Default(ApiRequestBodySchema, { url, ...overrides }) as Record<string, unknown>;
}
