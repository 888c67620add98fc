import { Type } from '@sinclair/typebox';
import {
  AGENTIC_MAX_PROMPT_CHARS,
  AGENTIC_MAX_SCRIPT_CHARS,
  AGENTIC_REPAIR_MODES,
} from '../../../protocol/index.js';
import { badField } from '../../platform/http/errors.js';
import { Ignored, IntegerEnum, Nullable, StringEnum, strict } from '../../platform/http/schema-helpers.js';
import { sharedCheckFields, zeroHeartbeat, zeroRequest } from './common.js';

/**
 * Minutes between runs of an AGENTIC check (docs/api.md, "Agentic checks"): 5 minutes at the least, as the
 * hosted API's agentic checks; default 30.
 */
export const AGENTIC_FREQUENCIES = [5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;

/** Default `frequency` of an AGENTIC check, minutes. */
export const AGENTIC_DEFAULT_FREQUENCY = 30;

/**
 * Longest run of an AGENTIC check, seconds, and its default: 600 s, room for a model to explore a site and
 * write a script (or repair one) and for the script to be run to verify it; configurable per check up to it.
 */
export const AGENTIC_TIMEOUT_SECONDS = 600;

/**
 * Most chat-completion calls one run of an AGENTIC check may make (the job's `maxModelCalls`): 40, enough
 * for a model to explore a few pages and write a script, few enough to bound what one run costs.
 */
export const AGENTIC_MAX_MODEL_CALLS = 40;

/** A skill's name: letters, digits, `_ . : -`, at most 64 characters (the job's `skills` items). */
const SkillName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$' });

/** `agentRuntime.skills`: at most 20 distinct skill names, default none. */
const skills = () => Type.Optional(Type.Array(SkillName, { maxItems: 20, uniqueItems: true, default: [] }));

/** `agentRuntime` of an AGENTIC check, as the hosted API has it: `skills`, extra tool groups (default none). */
export const AgentRuntimeSchema = Type.Object({ skills: skills() }, strict);

/**
 * Fields only AGENTIC checks have: other types refuse them (checkCrossFieldRules), so a body sent to the
 * wrong route is told so rather than stored.
 */
export const AGENTIC_FIELDS = ['prompt', 'agentRuntime', 'repairMode'] as const;

/**
 * Body of `POST /v1/checks/agentic` (docs/api.md, "Agentic checks"): the shared check fields, `prompt`
 * required (1–10,000 characters; `{{NAME}}` names a variable, and only the variables it names go to the
 * agent), `agentRuntime` `{ skills }` (default `{ skills: [] }`), `frequency` from AGENTIC_FREQUENCIES (default
 * 30), `repairMode` AUTO or REVIEW (default AUTO), `script` (a browser-check script a person writes, or null
 * for the first run to write one; default null), `timeoutSeconds` 1–600 (default 600). `scriptVersion` is
 * read-only (accepted and ignored). No `request`; response-time thresholds kept and answered, never used.
 */
export const CreateAgenticCheckBody = Type.Object(
  {
    ...sharedCheckFields,
    request: zeroRequest,
    heartbeat: zeroHeartbeat,
    degradedResponseTime: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 300_000 }))),
    maxResponseTime: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 300_000 }))),
    frequency: Type.Optional(IntegerEnum(AGENTIC_FREQUENCIES, { default: AGENTIC_DEFAULT_FREQUENCY })),
    prompt: Type.String({ minLength: 1, maxLength: AGENTIC_MAX_PROMPT_CHARS }),
    agentRuntime: Type.Optional(Type.Object({ skills: skills() }, { ...strict, default: { skills: [] } })),
    repairMode: Type.Optional(StringEnum(AGENTIC_REPAIR_MODES, { default: 'AUTO' })),
    script: Type.Optional(Nullable(Type.String({ maxLength: AGENTIC_MAX_SCRIPT_CHARS, default: null }))),
    scriptVersion: Ignored(
      Type.Integer({ minimum: 0 }),
      "read-only: the service counts the script's versions",
    ),
    timeoutSeconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: AGENTIC_TIMEOUT_SECONDS, default: AGENTIC_TIMEOUT_SECONDS }),
    ),
  },
  strict,
);

/**
 * The rules of an AGENTIC check JSON Schema does not express, on a new check and a merged update: a
 * non-blank `prompt`; `agentRuntime.skills` a list. Sets `scriptVersion` on a new check (1 when it was created
 * with a script, else 0) and the stored defaults of a check stored before a field existed.
 * @throws HttpError 400 naming the field.
 */
export function agenticRules(doc: Record<string, unknown>): void {
  const prompt = doc.prompt;
  if (typeof prompt !== 'string' || prompt.trim() === '') {
    throw badField('prompt', 'is required: the goal of the check in words', 'required');
  }
  if (prompt.length > AGENTIC_MAX_PROMPT_CHARS) {
    throw badField('prompt', `must be at most ${AGENTIC_MAX_PROMPT_CHARS} characters`, 'maxLength');
  }
  const runtime = doc.agentRuntime;
  if (runtime === undefined || runtime === null) doc.agentRuntime = { skills: [] };
  else if (typeof runtime !== 'object' || !Array.isArray((runtime as { skills?: unknown }).skills ?? [])) {
    throw badField('agentRuntime.skills', 'must be a list of skill names', 'type');
  } else if ((runtime as { skills?: unknown }).skills === undefined) {
    doc.agentRuntime = { ...runtime, skills: [] };
  }
  if (doc.repairMode === undefined || doc.repairMode === null) doc.repairMode = 'AUTO';
  if (doc.script === undefined || doc.script === '') doc.script = null;
  if (typeof doc.scriptVersion !== 'number') doc.scriptVersion = doc.script === null ? 0 : 1;
}
