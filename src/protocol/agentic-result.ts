import { type Static, Type } from '@sinclair/typebox';
import { AGENTIC_RUN_MODES } from './enums.js';
import { Nullable } from './schema.js';
import { literals } from '../common/literals.js';

/**
 * One assertion an AGENTIC run judged, in the hosted API's agentic shape: the `condition` in words (from the
 * prompt, or the script's `expect` it ran), whether it `passed`, and what was seen and expected (null when
 * not a value).
 */
export const AgenticAssertionSchema = Type.Object({
  condition: Type.String({ maxLength: 2000 }),
  passed: Type.Boolean(),
  actual: Nullable(Type.String({ maxLength: 2000 })),
  expected: Nullable(Type.String({ maxLength: 2000 })),
});
/** One judged assertion of an AGENTIC run (see {@link AgenticAssertionSchema}). */
export type AgenticAssertion = Static<typeof AgenticAssertionSchema>;

/**
 * One step of an AGENTIC run's conversation with its model, in order: a `MESSAGE` of the model (`text`), or a
 * `TOOL_CALL` (`tool` its name, `input` its arguments as JSON text, `output` what the tool answered, cut to
 * 8 KiB). Every text is scrubbed of the job's secret values. `durationMs` is the model call's time for a
 * message and the tool's for a tool call.
 */
export const AgenticStepSchema = Type.Object({
  kind: literals(['MESSAGE', 'TOOL_CALL'] as const),
  tool: Nullable(Type.String({ maxLength: 128 })),
  input: Nullable(Type.String({ maxLength: 8192 })),
  output: Nullable(Type.String({ maxLength: 8192 })),
  text: Nullable(Type.String({ maxLength: 8192 })),
  startedAt: Type.String(),
  durationMs: Type.Number(),
});
/** One step of an AGENTIC run (see {@link AgenticStepSchema}). */
export type AgenticStep = Static<typeof AgenticStepSchema>;

/**
 * The model calls of one run: how many, their summed time (milliseconds), and the tokens the endpoint
 * reported (null when it reported none). `model` is the configured model's name, null when no call was made.
 */
export const AgenticModelUsageSchema = Type.Object({
  model: Nullable(Type.String({ maxLength: 256 })),
  calls: Type.Integer({ minimum: 0 }),
  durationMs: Type.Number({ minimum: 0 }),
  promptTokens: Nullable(Type.Integer({ minimum: 0 })),
  completionTokens: Nullable(Type.Integer({ minimum: 0 })),
});
/** The model calls of one AGENTIC run (see {@link AgenticModelUsageSchema}). */
export type AgenticModelUsage = Static<typeof AgenticModelUsageSchema>;

/**
 * A script the run made: `GENERATED` (the check had none) or `REPAIRED` (a patch of version `baseVersion`),
 * the whole new `script`, a unified `diff` from the base (from the empty file for `GENERATED`), the `reason` in
 * words, and `verified`: the new script passed when the agent ran it as a browser check. The service stores
 * only verified changes made over the check's current version (docs/checks.md, "Agentic").
 */
export const AgenticScriptChangeSchema = Type.Object({
  kind: literals(['GENERATED', 'REPAIRED'] as const),
  baseVersion: Type.Integer({ minimum: 0 }),
  script: Type.String({ maxLength: 131_072 }),
  diff: Type.String({ maxLength: 262_144 }),
  reason: Type.String({ maxLength: 4000 }),
  verified: Type.Boolean(),
});
/** A script an AGENTIC run made (see {@link AgenticScriptChangeSchema}). */
export type AgenticScriptChange = Static<typeof AgenticScriptChangeSchema>;

/**
 * The AGENTIC part of a result (docs/checks.md, "Agentic"), in the hosted API's agentic shape (`summary`,
 * `assertions`, `steps`, `suggestions`, `errors`) plus what Outpost adds: the run's `mode`, the model's
 * `modelUsage`, the `scriptVersion` the run replayed (0: none) and the `scriptChange` it made, if any. The
 * browser result of the script the run executed last is the result's `browserCheckResult`.
 */
export const AgenticCheckResultSchema = Type.Object({
  mode: literals(AGENTIC_RUN_MODES),
  summary: Type.String({ maxLength: 4000 }),
  assertions: Type.Array(AgenticAssertionSchema, { maxItems: 200 }),
  steps: Type.Array(AgenticStepSchema, { maxItems: 500 }),
  suggestions: Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 }),
  errors: Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 }),
  modelUsage: AgenticModelUsageSchema,
  scriptVersion: Type.Integer({ minimum: 0 }),
  scriptChange: Nullable(AgenticScriptChangeSchema),
});
/** The AGENTIC part of a result (see {@link AgenticCheckResultSchema}). */
export type AgenticCheckResult = Static<typeof AgenticCheckResultSchema>;
