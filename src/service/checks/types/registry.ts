import type { TSchema } from '@sinclair/typebox';
import { type CheckType, ICMP_FREQUENCIES, type JobVariable } from '../../../protocol/index.js';
import { AGENTIC_CHECK_HOOKS } from '../../agentic/index.js';
import { HEARTBEAT_CHECK_HOOKS } from '../../heartbeats/index.js';
import type { GroupDoc } from '../../resources/index.js';
import {
  API_RESPONSE_TIME_LIMIT_MS,
  ApiRequestBodySchema,
  applyApiCheckDefaults,
  CreateApiCheckBody,
  groupBaseUrlVariables,
} from './api.js';
import {
  BROWSER_FREQUENCIES,
  BROWSER_TIMEOUT_SECONDS,
  CreateBrowserCheckBody,
  CreateMultiStepCheckBody,
  CreatePlaywrightCheckBody,
  SUITE_BODY_LIMIT_BYTES,
  SUITE_TIMEOUT_SECONDS,
  playwrightProjectRules,
} from './browser.js';
import { MINUTE_FREQUENCIES, type SharedCheckFields, TCP_FREQUENCIES } from './common.js';
import { CreateDnsCheckBody, DnsRequestBodySchema } from './dns.js';
import { CreateGrpcCheckBody, GrpcRequestBodySchema, grpcRules } from './grpc.js';
import { CreateHeartbeatCheckBody, heartbeatExpectation } from './heartbeat.js';
import type { CheckTypeHooks } from './hooks.js';
import {
  AGENTIC_FIELDS,
  AGENTIC_FREQUENCIES,
  AGENTIC_MAX_MODEL_CALLS,
  AGENTIC_TIMEOUT_SECONDS,
  agenticRules,
  CreateAgenticCheckBody,
} from './agentic.js';
import { CreateIcmpCheckBody, IcmpHeartbeatSchema, IcmpRequestBodySchema } from './icmp.js';
import { CreateTcpCheckBody, TcpRequestBodySchema } from './tcp.js';
import { CreateUrlCheckBody, UrlRequestBodySchema } from './url.js';
import { CreateSslCheckBody, SslRequestBodySchema } from './ssl.js';
import { CreateTracerouteCheckBody, TracerouteRequestBodySchema, tracerouteRules } from './traceroute.js';

/**
 * How the job of a run is built from a stored check of one type (runs/jobs.ts, JobBuilder.build;
 * docs/protocol.md: the service resolves everything the executor needs).
 */
export type JobRecipe = {
  /**
   * The job's `request` from the stored check (secrets in clear) and its group, e.g. the group's
   * `apiCheckDefaults` applied to an API check's request, or a browser check's script. Pure.
   */
  request(check: Record<string, unknown>, group: GroupDoc | null): Record<string, unknown>;
  /** Variables the group lends the check below the group's own `environmentVariables`. */
  groupVariables(group: GroupDoc | null): { key: string; value: string }[];
  /** The job carries `setupScript`, `tearDownScript` and a `clientCertificate` for its request's host. */
  scriptsAndCertificate: boolean;
  /**
   * The deprecated `doubleCheck` counts as a retry strategy, and every job carries `retryStrategy`,
   * `checkRunId` and `runStartedAt`; false: only under a strategy set on the check or its group, so
   * `doubleCheck` (true by default) does not start retrying every existing uptime monitor.
   */
  retriesOnDoubleCheck: boolean;
  /**
   * The variables the job carries, from the merged ones (check > group > account); absent: all of them.
   * AGENTIC checks keep only those their prompt names, so no other value reaches the agent or its model.
   */
  variables?(check: Record<string, unknown>, merged: JobVariable[]): JobVariable[];
};

/** The request as stored; no group part, scripts or certificate; retries only under a set strategy. */
const AS_STORED: JobRecipe = {
  request: (check) => storedRequest(check),
  groupVariables: () => [],
  scriptsAndCertificate: false,
  retriesOnDoubleCheck: false,
};

/** API checks: the group's `apiCheckDefaults` and base url, scripts, client certificate, doubleCheck. */
const API_JOB: JobRecipe = {
  request: (check, group) => applyApiCheckDefaults(storedRequest(check), group?.apiCheckDefaults ?? null),
  groupVariables: (group) => groupBaseUrlVariables(group?.apiCheckDefaults),
  scriptsAndCertificate: true,
  retriesOnDoubleCheck: true,
};

/**
 * One check type as the service knows it: how it is created, validated, limited and run, and what it
 * does beyond its document (its lifecycle hooks, CheckTypeHooks; none for the types agents run).
 * Adding a check type is one entry here plus its schemas in a file of its own in this folder (its create
 * schema and, with a request, its request schema), and its hooks if it keeps more than its document.
 */
export type CheckTypeEntry = {
  checkType: CheckType;
  /** Last segment of `POST /v1/checks/{path}`. */
  path: string;
  /**
   * Body of `POST /v1/checks/{path}`: validates the body and fills its defaults. Its required
   * fields are rules of the type: ICMP requires `heartbeat` and `script` as the public API's ICMP
   * schema does, the other uptime types refuse them (docs/checks.md, "ICMP").
   */
  createBody: TSchema & { static: SharedCheckFields };
  /**
   * Schema of `request` in `PUT /v1/checks/{id}` (the rest of that body is the shared
   * UpdateCheckBody); null: none to validate (browser checks run a script and have no request).
   */
  updateRequest: TSchema | null;
  /**
   * Schema `heartbeat` of `PUT /v1/checks/{id}` must also pass, before the update merges (the update
   * body, UpdateAnyCheckBody, takes the fields of every type's `heartbeat`): ICMP heartbeat settings for
   * every type an agent runs, as the public API's update body has them; null: none beyond the body's (a
   * HEARTBEAT check's `heartbeat` is checked by its rules after the merge).
   */
  updateHeartbeat: TSchema | null;
  /**
   * Minutes between runs the type accepts, checked again after an update merges (the update body
   * takes any integer). 0 is the sub-minute schedule (every 10, 20 or 30 s, `frequencyOffset`),
   * offered to ICMP, TCP and API checks as in the public API: DNS, URL and browser checks run at
   * most once a minute (docs/checks.md, "Frequency and the sub-minute schedule").
   */
  frequencies: readonly number[];
  /**
   * Most `degradedResponseTime` / `maxResponseTime`, ms, where the type's run limit is below the
   * general 300 000 of the schemas (API: 30 000); checked after an update merges, since the update
   * body only has the general limit. Null: no cap of its own.
   */
  responseTimeLimitMs: number | null;
  /**
   * Hard run limit of one run, ms, carried by the job as `timeoutMs` (docs/checks.md, "Operating
   * figures"); for types with `timeoutSeconds`, the cap of that field and the limit of a check
   * stored without it (see jobTimeoutMs).
   */
  runTimeoutMs: number;
  /**
   * The check carries its own run limit, `timeoutSeconds` (1 to runTimeoutMs / 1000): browser,
   * multi-step and suites; false: the type refuses that field.
   */
  timeoutSeconds: boolean;
  /** Its runtime (the check's, its group's or the default) must have `multiStepSupport`. */
  needsMultiStepRuntime: boolean;
  /**
   * Rules of the type JSON Schema cannot express, applied to a new check and to a merged update
   * (e.g. a Playwright check suite's project); null: none.
   * @throws HttpError 400 naming the field.
   */
  rules: ((doc: Record<string, unknown>) => void) | null;
  /** Request body limit of its create route and of updates of such checks, bytes; null: the service's (1 MiB). */
  bodyLimitBytes: number | null;
  /** An agent can run it today: check sessions (trigger, test) start only for these types. */
  runnable: boolean;
  /**
   * Its job always runs a script, so it is claimed only by an agent holding the check's runtime
   * (`jobs.runtime_id`, runs/queue/payload.ts requiredRuntimeOf): browser, multi-step, suites.
   */
  runsScript: boolean;
  /** How a run's job is built from the stored check. */
  job: JobRecipe;
  /**
   * Fields only this type has: a check of another type refuses them (checkCrossFieldRules), so an update
   * sent with them to another type's check is told so rather than stored. Absent: none.
   */
  ownFields?: readonly string[];
} & CheckTypeHooks;

/** The check's stored `request` object (an empty one for a check stored without). */
function storedRequest(check: Record<string, unknown>): Record<string, unknown> {
  const request = check.request;
  return request !== null && typeof request === 'object' ? (request as Record<string, unknown>) : {};
}

/**
 * Browser and multi-step checks: the job's request is the script, its dependency files and the
 * `sslCheckDomain` (protocol BrowserRequestSchema); no group part, scripts or certificate.
 */
const SCRIPT_JOB: JobRecipe = {
  request: (check) => ({
    script: typeof check.script === 'string' ? check.script : '',
    dependencies: Array.isArray(check.dependencies) ? check.dependencies : [],
    sslCheckDomain:
      typeof check.sslCheckDomain === 'string' && check.sslCheckDomain !== '' ? check.sslCheckDomain : null,
  }),
  groupVariables: () => [],
  scriptsAndCertificate: false,
  retriesOnDoubleCheck: false,
};

/** Playwright check suites: the project's files and its spec inline or by path (protocol SuiteRequestSchema). */
const SUITE_JOB: JobRecipe = {
  ...SCRIPT_JOB,
  request: (check) => ({
    script: typeof check.script === 'string' && check.script !== '' ? check.script : null,
    scriptPath: typeof check.scriptPath === 'string' ? check.scriptPath : null,
    dependencies: Array.isArray(check.dependencies) ? check.dependencies : [],
    sslCheckDomain:
      typeof check.sslCheckDomain === 'string' && check.sslCheckDomain !== '' ? check.sslCheckDomain : null,
  }),
};

/** `{{NAME}}` or `{{ NAME }}` in a prompt: the variables an AGENTIC check's job carries. */
const PROMPT_VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The variable names `{{NAME}}` in `prompt` names (docs/checks.md, "Agentic"). */
export function promptVariableNames(prompt: string): Set<string> {
  return new Set([...prompt.matchAll(PROMPT_VARIABLE)].map((m) => m[1]!));
}

/**
 * AGENTIC checks: the job's request is the prompt, the stored script and its version, the repair mode, the
 * skills and the model-call budget (protocol AgenticRequestSchema); its variables are only those the prompt
 * names; no group part, scripts or certificate.
 */
const AGENTIC_JOB: JobRecipe = {
  request: (check) => {
    const script = typeof check.script === 'string' && check.script !== '' ? check.script : null;
    const runtime = (check.agentRuntime ?? {}) as { skills?: unknown };
    return {
      prompt: typeof check.prompt === 'string' ? check.prompt : '',
      script,
      scriptVersion: script === null ? 0 : Number(check.scriptVersion ?? 1),
      repairMode: check.repairMode === 'REVIEW' ? 'REVIEW' : 'AUTO',
      skills: Array.isArray(runtime.skills) ? (runtime.skills as string[]) : [],
      maxModelCalls: AGENTIC_MAX_MODEL_CALLS,
    };
  },
  groupVariables: () => [],
  scriptsAndCertificate: false,
  retriesOnDoubleCheck: false,
  variables: (check, merged) => {
    const named = promptVariableNames(typeof check.prompt === 'string' ? check.prompt : '');
    return merged.filter((v) => named.has(v.key));
  },
};

/** What the uptime types and API checks share: 30 s runs, no own time limit or extra rules, run by agents. */
const PROTOCOL_CHECK = {
  updateHeartbeat: IcmpHeartbeatSchema,
  responseTimeLimitMs: null,
  runTimeoutMs: 30_000,
  timeoutSeconds: false,
  needsMultiStepRuntime: false,
  rules: null,
  bodyLimitBytes: null,
  runnable: true,
  runsScript: false,
  job: AS_STORED,
} as const satisfies Partial<CheckTypeEntry>;

/**
 * What browser, multi-step and suite checks share: a script and no request, minute frequencies,
 * their own `timeoutSeconds` up to 240 s; run by agents that have a browser.
 */
const SCRIPTED_CHECK = {
  updateRequest: null,
  updateHeartbeat: IcmpHeartbeatSchema,
  frequencies: BROWSER_FREQUENCIES,
  responseTimeLimitMs: null,
  runTimeoutMs: BROWSER_TIMEOUT_SECONDS * 1000,
  timeoutSeconds: true,
  needsMultiStepRuntime: false,
  rules: null,
  bodyLimitBytes: null,
  runnable: true,
  runsScript: true,
  job: SCRIPT_JOB,
} as const satisfies Partial<CheckTypeEntry>;

/** Every check type the service accepts with its entry, in the order their create routes are registered. */
export const CHECK_TYPE_REGISTRY: readonly CheckTypeEntry[] = [
  {
    ...PROTOCOL_CHECK,
    checkType: 'ICMP',
    path: 'icmp',
    createBody: CreateIcmpCheckBody,
    updateRequest: IcmpRequestBodySchema,
    frequencies: ICMP_FREQUENCIES,
  },
  {
    ...PROTOCOL_CHECK,
    checkType: 'DNS',
    path: 'dns',
    createBody: CreateDnsCheckBody,
    updateRequest: DnsRequestBodySchema,
    frequencies: MINUTE_FREQUENCIES,
  },
  {
    ...PROTOCOL_CHECK,
    checkType: 'TCP',
    path: 'tcp',
    createBody: CreateTcpCheckBody,
    updateRequest: TcpRequestBodySchema,
    frequencies: TCP_FREQUENCIES,
  },
  {
    ...PROTOCOL_CHECK,
    checkType: 'URL',
    path: 'url',
    createBody: CreateUrlCheckBody,
    updateRequest: UrlRequestBodySchema,
    frequencies: MINUTE_FREQUENCIES,
  },
  {
    ...PROTOCOL_CHECK,
    checkType: 'API',
    path: 'api',
    createBody: CreateApiCheckBody,
    updateRequest: ApiRequestBodySchema,
    frequencies: TCP_FREQUENCIES,
    responseTimeLimitMs: API_RESPONSE_TIME_LIMIT_MS,
    job: API_JOB,
  },
  // SSL and TRACEROUTE monitors: response-time limits at most 30 000 ms, as the hosted API's.
  {
    ...PROTOCOL_CHECK,
    checkType: 'SSL',
    path: 'ssl',
    createBody: CreateSslCheckBody,
    updateRequest: SslRequestBodySchema,
    frequencies: MINUTE_FREQUENCIES,
    responseTimeLimitMs: 30_000,
  },
  {
    ...PROTOCOL_CHECK,
    checkType: 'TRACEROUTE',
    path: 'traceroute',
    createBody: CreateTracerouteCheckBody,
    updateRequest: TracerouteRequestBodySchema,
    frequencies: TCP_FREQUENCIES,
    responseTimeLimitMs: 30_000,
    rules: tracerouteRules,
  },
  {
    ...PROTOCOL_CHECK,
    checkType: 'GRPC',
    path: 'grpc',
    createBody: CreateGrpcCheckBody,
    updateRequest: GrpcRequestBodySchema,
    frequencies: MINUTE_FREQUENCIES,
    rules: grpcRules,
  },
  { ...SCRIPTED_CHECK, checkType: 'BROWSER', path: 'browser', createBody: CreateBrowserCheckBody },
  {
    ...SCRIPTED_CHECK,
    checkType: 'MULTI_STEP',
    path: 'multistep',
    createBody: CreateMultiStepCheckBody,
    needsMultiStepRuntime: true,
  },
  {
    ...SCRIPTED_CHECK,
    checkType: 'PLAYWRIGHT',
    path: 'playwright',
    createBody: CreatePlaywrightCheckBody,
    runTimeoutMs: SUITE_TIMEOUT_SECONDS * 1000,
    rules: playwrightProjectRules,
    bodyLimitBytes: SUITE_BODY_LIMIT_BYTES,
    job: SUITE_JOB,
  },
  {
    // A goal in words that becomes a browser script, repaired when it breaks (docs/checks.md, "Agentic"):
    // runs as a browser check does (runtime 2026.04, an agent with a browser), its script kept in versions.
    ...SCRIPTED_CHECK,
    checkType: 'AGENTIC',
    path: 'agentic',
    createBody: CreateAgenticCheckBody,
    frequencies: AGENTIC_FREQUENCIES,
    runTimeoutMs: AGENTIC_TIMEOUT_SECONDS * 1000,
    rules: agenticRules,
    job: AGENTIC_JOB,
    ownFields: AGENTIC_FIELDS,
    ...AGENTIC_CHECK_HOOKS,
  },
  {
    // Passive (docs/heartbeats.md): pinged by the user's job, never scheduled, claimed or triggered
    // (a trigger by checkId skips it); its results are stored by the service's heartbeat monitor.
    checkType: 'HEARTBEAT',
    path: 'heartbeat',
    createBody: CreateHeartbeatCheckBody,
    updateRequest: null,
    updateHeartbeat: null,
    // Not used: stored as given so a generic update body passes.
    frequencies: MINUTE_FREQUENCIES,
    responseTimeLimitMs: null,
    runTimeoutMs: 30_000,
    timeoutSeconds: false,
    needsMultiStepRuntime: false,
    rules: (doc) => {
      heartbeatExpectation(doc.heartbeat, Date.now());
    },
    bodyLimitBytes: null,
    runnable: false,
    runsScript: false,
    job: AS_STORED,
    // Its heartbeat row, pings, view fields and pings route (heartbeats/check-type.ts).
    ...HEARTBEAT_CHECK_HOOKS,
  },
];

/**
 * Run limit of one run of a check, ms, carried by its job as `timeoutMs`: its `timeoutSeconds`
 * where its type has that field and the check sets it, else the type's runTimeoutMs.
 */
export function jobTimeoutMs(check: { checkType: CheckType; timeoutSeconds?: unknown }): number {
  const entry = checkTypeEntry(check.checkType);
  const own = check.timeoutSeconds;
  return entry.timeoutSeconds && typeof own === 'number' ? own * 1000 : entry.runTimeoutMs;
}

const ENTRIES: ReadonlyMap<CheckType, CheckTypeEntry> = new Map(
  CHECK_TYPE_REGISTRY.map((e) => [e.checkType, e]),
);

/** Check types an agent can run today (see CheckTypeEntry.runnable). */
export const RUNNABLE_CHECK_TYPES: ReadonlySet<CheckType> = new Set(
  CHECK_TYPE_REGISTRY.filter((e) => e.runnable).map((e) => e.checkType),
);

/**
 * The entry of a stored check's type.
 * @throws Error when the service accepts no such type: a stored check always has one (only
 *   `POST /v1/checks/{path}` creates checks, and a check cannot change type).
 */
export function checkTypeEntry(checkType: CheckType): CheckTypeEntry {
  const entry = ENTRIES.get(checkType);
  if (!entry) throw new Error(`the service accepts no ${checkType} checks`);
  return entry;
}
