import { type Static, Type } from '@sinclair/typebox';
import { RUNTIME_IDS } from '../../../protocol/index.js';
import { StringEnum, strict } from '../../platform/http/schema-helpers.js';

/** Runtime stages (docs/api.md, "Runtime"). */
const RUNTIME_STAGES = ['ALPHA', 'BETA', 'CURRENT', 'DEPRECATED', 'REMOVED', 'STABLE'] as const;

/**
 * A runtime (docs/api.md, "Runtime"): the shape of each `runtimes/<name>/runtime.json`
 * and of `GET /v1/runtimes` items. `name` is one of the runtimeId values;
 * `runtimeEndOfLife` is written month/day/year (`04/30/2028`); `dependencies`
 * maps npm package names to versions (exact, or `major.minor` ranges where only
 * those are known).
 */
export const RuntimeSchema = Type.Object(
  {
    name: StringEnum(RUNTIME_IDS),
    stage: StringEnum(RUNTIME_STAGES),
    runtimeEndOfLife: Type.String({ pattern: '^(0[1-9]|1[0-2])/(0[1-9]|[12][0-9]|3[01])/[0-9]{4}$' }),
    nodeJsVersion: Type.String({ minLength: 1, maxLength: 32, pattern: '^[0-9]+(\\.[0-9]+){0,2}$' }),
    multiStepSupport: Type.Boolean(),
    description: Type.String({ minLength: 1, maxLength: 1000 }),
    dependencies: Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 64 })),
  },
  strict,
);
export type Runtime = Static<typeof RuntimeSchema>;

/** Path of `GET /v1/runtimes/{id}`: the runtime's name, such as 2026.04. */
export const RuntimeParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 32 }) }, strict);
