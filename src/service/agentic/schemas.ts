import { Type } from '@sinclair/typebox';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

/**
 * One script change of an AGENTIC check as `GET /v1/checks/{id}/agentic-repairs` answers it (docs/api.md,
 * "Agentic checks"): `kind` GENERATED or REPAIRED; `status` APPLIED (stored as `newVersion`), PENDING (a
 * REVIEW check's repair waiting for a person), REJECTED or STALE (made over a version that moved); the
 * version it was made over, the model's `reason`, the unified `diff` and the whole `script`; the result and
 * agent that made it; when it was made and decided (ISO) and who decided it (null: the service, by the
 * check's repair mode).
 */
export const RepairSchema = Type.Object(
  {
    id: Type.String(),
    checkId: Type.String(),
    kind: Type.Union([Type.Literal('GENERATED'), Type.Literal('REPAIRED')]),
    status: Type.Union([
      Type.Literal('APPLIED'),
      Type.Literal('PENDING'),
      Type.Literal('REJECTED'),
      Type.Literal('STALE'),
    ]),
    baseVersion: Type.Integer({ minimum: 0 }),
    newVersion: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    reason: Type.String(),
    diff: Type.String(),
    script: Type.String(),
    resultId: Nullable(Type.String()),
    agentId: Nullable(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
    decidedAt: Nullable(Type.String({ format: 'date-time' })),
    decidedBy: Type.Union([
      Type.Object({ kind: Type.String(), id: Type.String(), name: Nullable(Type.String()) }),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
);

/**
 * `GET /v1/agentic-usage`: the account's AGENTIC runs stored in a calendar month (UTC) and their model usage,
 * summed: `modelCalls`, `durationMs` (the model calls' time, ms), `promptTokens` and `completionTokens` (as
 * the endpoints reported them; 0 for runs whose endpoint reported none).
 */
export const UsageSchema = Type.Object(
  {
    month: Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$' }),
    runs: Type.Integer({ minimum: 0 }),
    modelCalls: Type.Integer({ minimum: 0 }),
    durationMs: Type.Number({ minimum: 0 }),
    promptTokens: Type.Integer({ minimum: 0 }),
    completionTokens: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
