/**
 * The executor of AGENTIC checks (docs/checks.md, "Agentic"): a goal in words becomes a deterministic
 * Playwright script, which later runs replay with no model in the loop and a model wakes only to repair.
 *
 * - GENERATE (no stored script): the model explores the site through browser tools run in a runner
 *   process (src/browser/runner/tools.ts: the isolation of a browser check); the statements of its
 *   successful actions and verifications are the script, which is then run as a browser check to verify it.
 * - REPLAY (a stored script): the script runs as a browser check; no model call.
 * - REPAIR: a replay that failed because an element could not be found or acted on (not a failed
 *   `expect`: that is the check's own failure) wakes the model with the goal, the script, the error and
 *   the page where it failed; its new script is verified the same way.
 *
 * The model is called from the agent process only (the key never reaches a runner); every text of the
 * result is scrubbed of the job's secret values; secret variables reach the model as `{{NAME}}` only.
 */
import { Value } from '@sinclair/typebox/value';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { RunnerToolSession } from '../../browser/runner-process.js';
import { roundMs } from '../../common/clock.js';
import { Scrubber } from '../../common/scrub.js';
import {
  type AgenticCheckResult,
  type AgenticRequest,
  AGENTIC_MAX_SCRIPT_CHARS,
  AgenticRequestSchema,
  type AgenticRunMode,
  type AgenticScriptChange,
  DEFAULT_RUNTIME_ID,
  type Job,
  type JobVariable,
  type RunOutcome,
} from '../../protocol/index.js';
import { BROWSER_SCRIPT_SECRET_PREFIXES } from '../../common/child/secrets.js';
import {
  type BrowserExecutor,
  type BrowserPoolPort,
  createBrowserExecutor,
  failure,
} from '../browser/executor.js';
import type { Executor, ExecutorContext, RunArtifactFile } from '../executor.js';
import { releaseOutcome } from '../outcome.js';
import { type LoopOutcome, runLoop } from './loop.js';
import { type ModelEndpoint, ModelClient } from './model-client.js';
import { generateMessages, namedVariables, repairMessages } from './prompts.js';
import { assembleScript, linesBefore, repairable, scriptDiff } from './script.js';

/** The `errorMessage` of a run that needs the model on an agent that has none. */
export const NO_MODEL_MESSAGE = 'no model endpoint configured on this agent (OUTPOST_AGENT_MODEL_URL)';

/** How long one action or verification waits for its element while exploring, ms. */
const ACTION_TIMEOUT_MS = 5_000;
/** How long the agent waits for one tool's answer before it kills the runner, ms (a navigation takes up to 20 s). */
const TOOL_TIMEOUT_MS = 30_000;
/** Longest tool answer sent to the model, characters. */
const MAX_TOOL_OUTPUT_CHARS = 16_000;
/** Least time kept back from exploring for the verification run, ms. */
const MIN_VERIFY_RESERVE_MS = 20_000;

/** Options of {@link createAgenticExecutor}. */
export type AgenticExecutorOptions = {
  /** The agent's browser pool: tool sessions and browser runs take their browser and runner from it. */
  pool: BrowserPoolPort;
  /** The model endpoint (`OUTPOST_AGENT_MODEL_URL`…); null: none configured (runs that need it fail). */
  model: ModelEndpoint | null;
  /** Where browser runs' scrubbed artifacts wait for upload; default the OS temp dir. */
  tmpRoot?: string;
};

/** The executor of AGENTIC checks (see the module's comment). */
export class AgenticExecutor implements Executor {
  readonly checkType = 'AGENTIC' as const;
  readonly #pool: BrowserPoolPort;
  readonly #browser: BrowserExecutor;
  readonly #model: ModelClient | null;

  constructor(options: AgenticExecutorOptions) {
    this.#pool = options.pool;
    this.#browser = createBrowserExecutor({
      checkType: 'BROWSER',
      pool: options.pool,
      ...(options.tmpRoot !== undefined ? { tmpRoot: options.tmpRoot } : {}),
    });
    this.#model = options.model === null ? null : new ModelClient(options.model);
  }

  async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
    const startedAt = new Date();
    const t0 = performance.now();
    const request = job.check.request;
    if (!Value.Check(AgenticRequestSchema, request)) {
      const first = Value.Errors(AgenticRequestSchema, request).First();
      return failure(
        `malformed agentic check request: ${first ? `${first.path || '/'} ${first.message}` : 'invalid'}`,
        startedAt,
        t0,
      );
    }
    const run = new AgenticRun(
      job,
      request as AgenticRequest,
      context,
      this.#pool,
      this.#browser,
      this.#model,
      t0,
    );
    try {
      return await run.execute(startedAt);
    } finally {
      await run.releaseArtifacts();
    }
  }

  async close(): Promise<void> {
    await this.#browser.close();
  }
}

/** Builds the AGENTIC executor on the agent's pool and model endpoint. */
export function createAgenticExecutor(options: AgenticExecutorOptions): AgenticExecutor {
  return new AgenticExecutor(options);
}

/** One run: its variables, secrets, deadline and what it gathered. */
class AgenticRun {
  readonly #job: Job;
  readonly #request: AgenticRequest;
  readonly #context: ExecutorContext;
  readonly #pool: BrowserPoolPort;
  readonly #browser: BrowserExecutor;
  readonly #model: ModelClient | null;
  readonly #deadline: number;
  /** The variables the prompt names: the only ones the model and the scripts get. */
  readonly #variables: JobVariable[];
  readonly #secrets: string[];
  readonly #scrubber: Scrubber;
  #loop: LoopOutcome | null = null;
  readonly #errors: string[] = [];
  /** Artifacts of the browser runs; only the last run's are attached. */
  #artifacts: { files: RunArtifactFile[]; release: () => Promise<void> } | null = null;

  constructor(
    job: Job,
    request: AgenticRequest,
    context: ExecutorContext,
    pool: BrowserPoolPort,
    browser: BrowserExecutor,
    model: ModelClient | null,
    t0: number,
  ) {
    this.#job = job;
    this.#request = request;
    this.#context = context;
    this.#pool = pool;
    this.#browser = browser;
    this.#model = model;
    this.#deadline = t0 + job.timeoutMs;
    const named = namedVariables(request.prompt);
    this.#variables = job.environmentVariables.filter((v) => named.has(v.key));
    this.#secrets = job.environmentVariables.filter((v) => this.#isSecret(v)).map((v) => v.value);
    this.#scrubber = new Scrubber(this.#secrets);
  }

  #isSecret(v: JobVariable): boolean {
    return v.secret || BROWSER_SCRIPT_SECRET_PREFIXES.some((p) => v.key.startsWith(p));
  }

  async execute(startedAt: Date): Promise<RunOutcome> {
    const { script, scriptVersion } = this.#request;
    if (script === null || scriptVersion === 0) {
      if (this.#model === null) return this.#noModel('GENERATE', startedAt, null);
      return this.#generate(startedAt);
    }
    const replay = await this.#browserRun(script);
    if (replay.status === 'PASSED') return this.#finish('REPLAY', replay, null, 'The stored script passed.');
    const broken = repairable(replay.browserCheckResult);
    if (broken === null)
      return this.#finish(
        'REPLAY',
        replay,
        null,
        `The stored script failed: ${replay.errorMessage ?? 'unknown'}.`,
      );
    if (this.#model === null) return this.#noModel('REPAIR', startedAt, replay);
    return this.#repair(replay, script, broken.message, broken.location?.line ?? null);
  }

  async #generate(startedAt: Date): Promise<RunOutcome> {
    const loop = await this.#explore(async () =>
      generateMessages(this.#request.prompt, this.#variables, (v) => this.#isSecret(v)),
    );
    if (loop === null || loop.errors.length > 0 || loop.finished === null || loop.statements.length === 0) {
      return this.#explorationFailed('GENERATE', startedAt, null);
    }
    const script = assembleScript(loop.statements);
    if (script.length > AGENTIC_MAX_SCRIPT_CHARS) {
      this.#errors.unshift(
        `the written script has ${script.length} characters, more than ${AGENTIC_MAX_SCRIPT_CHARS}`,
      );
      return this.#explorationFailed('GENERATE', startedAt, null);
    }
    const verify = await this.#browserRun(script);
    const change: AgenticScriptChange = {
      kind: 'GENERATED',
      baseVersion: 0,
      script,
      diff: fitDiff(scriptDiff('', script, 0)),
      reason: cap(`Written from the prompt: ${loop.finished.summary}`, 4000),
      verified: verify.status === 'PASSED',
    };
    if (!change.verified)
      this.#errors.push(
        `the written script failed its verification run: ${verify.errorMessage ?? 'unknown'}`,
      );
    return this.#finish('GENERATE', verify, change, loop.finished.summary);
  }

  async #repair(replay: RunOutcome, script: string, error: string, line: number | null): Promise<RunOutcome> {
    const failedOld = `the script of version ${this.#request.scriptVersion} failed: ${replay.errorMessage ?? error}`;
    this.#errors.push(failedOld);
    let kept = linesBefore(script, line);
    const loop = await this.#explore(async (tools) => {
      let snapshot = '';
      if (kept.length > 0) {
        const ran = await tools.call('run_code', { code: kept.join('\n') }, TOOL_TIMEOUT_MS);
        if (!ran.ok) kept = [];
        snapshot = ran.output;
      }
      if (kept.length === 0) snapshot = '(a blank page)';
      return repairMessages({
        prompt: this.#request.prompt,
        variables: this.#variables,
        isSecret: (v) => this.#isSecret(v),
        script,
        error,
        kept,
        snapshot,
      });
    });
    if (loop === null || loop.errors.length > 0 || loop.finished === null || loop.statements.length === 0) {
      const outcome = this.#finish(
        'REPAIR',
        replay,
        null,
        `The stored script failed and could not be repaired: ${failedOld}.`,
      );
      return { ...outcome, status: 'FAILED', hasErrors: outcome.hasErrors || (loop?.errors.length ?? 1) > 0 };
    }
    const next = assembleScript(loop.statements, kept);
    if (next.length > AGENTIC_MAX_SCRIPT_CHARS) {
      this.#errors.push(
        `the repaired script has ${next.length} characters, more than ${AGENTIC_MAX_SCRIPT_CHARS}`,
      );
      const outcome = this.#finish(
        'REPAIR',
        replay,
        null,
        `The stored script failed and could not be repaired: ${failedOld}.`,
      );
      return { ...outcome, status: 'FAILED', hasErrors: true };
    }
    const verify = await this.#browserRun(next);
    const verified = verify.status === 'PASSED';
    const change: AgenticScriptChange = {
      kind: 'REPAIRED',
      baseVersion: this.#request.scriptVersion,
      script: next,
      diff: fitDiff(scriptDiff(script, next, this.#request.scriptVersion)),
      reason: cap(`Repaired after: ${error}. ${loop.finished.summary}`, 4000),
      verified,
    };
    if (!verified)
      this.#errors.push(
        `the repaired script failed its verification run: ${verify.errorMessage ?? 'unknown'}`,
      );
    const summary = verified
      ? `The stored script failed (${error}); the repaired script passed. ${loop.finished.summary}`
      : `The stored script failed (${error}); the repaired script failed too.`;
    const outcome = this.#finish('REPAIR', verify, change, summary);
    return verified ? outcome : { ...outcome, status: 'FAILED', hasFailures: true };
  }

  /**
   * A tool session on a browser of the pool and the conversation in it; null when no browser could be
   * had or no time is left (the reason is in the run's errors). `opening` makes the first messages once
   * the session is open (a repair first brings the page to where the script failed).
   */
  async #explore(
    opening: (tools: RunnerToolSession) => Promise<ChatCompletionMessageParam[]>,
  ): Promise<LoopOutcome | null> {
    const model = this.#model as ModelClient;
    const reserve = Math.max(MIN_VERIFY_RESERVE_MS, Math.round(this.#job.timeoutMs * 0.3));
    const exploreMs = this.#deadline - reserve - performance.now();
    if (exploreMs < 5_000) {
      this.#errors.push(`the run's ${this.#job.timeoutMs} ms leave no time to explore the site`);
      return null;
    }
    const signal = AbortSignal.any([this.#context.signal, AbortSignal.timeout(Math.round(exploreMs))]);
    let lease: Awaited<ReturnType<BrowserPoolPort['acquire']>>;
    try {
      lease = await this.#pool.acquire(this.#job.check.runtimeId ?? DEFAULT_RUNTIME_ID, {
        signal,
        accountId: this.#job.accountId,
      });
    } catch (err) {
      this.#errors.push(`no browser to explore the site with: ${(err as Error).message}`);
      return null;
    }
    let browserFailed = false;
    try {
      const env: Record<string, string> = {};
      for (const v of this.#variables) env[v.key] = v.value;
      const tools = lease.runner.toolSession(
        {
          wsEndpoint: lease.wsEndpoint,
          env,
          secrets: this.#secrets,
          actionTimeoutMs: ACTION_TIMEOUT_MS,
          maxOutputChars: MAX_TOOL_OUTPUT_CHARS,
        },
        { signal },
      );
      try {
        // The stored script and the page are scrubbed again here: nothing of a secret value reaches the model.
        const first = (await opening(tools)).map((m) =>
          typeof m.content === 'string' ? { ...m, content: this.#scrubber.text(m.content) } : m,
        ) as ChatCompletionMessageParam[];
        this.#loop = await runLoop({
          model,
          tools,
          messages: first,
          maxModelCalls: this.#request.maxModelCalls,
          toolTimeoutMs: TOOL_TIMEOUT_MS,
          scrubber: this.#scrubber,
          signal,
        });
        browserFailed = !tools.alive;
      } finally {
        await tools.close();
      }
    } finally {
      await lease.release({ browserFailed });
    }
    this.#errors.push(...this.#loop.errors);
    return this.#loop;
  }

  /** Runs `script` as a BROWSER check of the job (same account, runtime, variables), in the time left. */
  async #browserRun(script: string): Promise<RunOutcome> {
    const timeoutMs = Math.max(1_000, Math.round(this.#deadline - performance.now()));
    const job: Job = {
      ...this.#job,
      check: {
        ...this.#job.check,
        checkType: 'BROWSER',
        request: { script, dependencies: [], sslCheckDomain: null },
        shouldFail: false,
      },
      environmentVariables: this.#job.environmentVariables,
      timeoutMs,
    };
    const outcome = await this.#browser.run(job, {
      signal: this.#context.signal,
      log: this.#context.log,
      attachArtifacts: (files, release) => {
        const earlier = this.#artifacts;
        this.#artifacts = { files, release };
        void earlier?.release();
      },
    });
    return outcome;
  }

  /** Hands the last browser run's artifacts to the agent (or releases them where nothing uploads). */
  async releaseArtifacts(): Promise<void> {
    const kept = this.#artifacts;
    this.#artifacts = null;
    if (kept === null) return;
    if (this.#context.attachArtifacts) this.#context.attachArtifacts(kept.files, kept.release);
    else await kept.release();
  }

  /** A run that needed the model on an agent without one: FAILED, hasErrors, the reason said. */
  #noModel(mode: AgenticRunMode, startedAt: Date, replay: RunOutcome | null): RunOutcome {
    this.#errors.push(NO_MODEL_MESSAGE);
    const base = replay ?? failure(NO_MODEL_MESSAGE, startedAt, this.#deadline - this.#job.timeoutMs);
    const outcome = this.#finish(mode, base, null, `The run needed the model: ${NO_MODEL_MESSAGE}.`);
    const errorMessage =
      replay === null
        ? NO_MODEL_MESSAGE
        : `${replay.errorMessage ?? 'the stored script failed'}; ${NO_MODEL_MESSAGE}`;
    return { ...outcome, status: 'FAILED', hasErrors: true, errorMessage };
  }

  /** An exploration that ended without a script: FAILED, hasErrors, its first error the message. */
  #explorationFailed(mode: AgenticRunMode, startedAt: Date, replay: RunOutcome | null): RunOutcome {
    if (this.#errors.length === 0)
      this.#errors.push('the model finished without any action to make a script of');
    const reason = this.#errors[0] as string;
    const base = replay ?? failure(reason, startedAt, this.#deadline - this.#job.timeoutMs);
    const outcome = this.#finish(mode, base, null, `No script was written: ${reason}.`);
    return { ...outcome, status: 'FAILED', hasErrors: true, errorMessage: this.#scrubber.text(reason) };
  }

  /** The outcome of `base` (the browser run executed last) with the run's agentic part, scrubbed. */
  #finish(
    mode: AgenticRunMode,
    base: RunOutcome,
    change: AgenticScriptChange | null,
    summary: string,
  ): RunOutcome {
    const loop = this.#loop;
    const agentic: AgenticCheckResult = {
      mode,
      summary: cap(summary, 4000),
      assertions: loop?.assertions ?? [],
      steps: loop?.steps ?? [],
      suggestions: loop?.suggestions ?? [],
      errors: this.#errors.slice(0, 50).map((e) => cap(e, 2000)),
      modelUsage: {
        model: loop !== null && loop.calls > 0 ? cap(this.#model?.endpoint.model ?? '', 256) : null,
        calls: loop?.calls ?? 0,
        durationMs: roundMs(loop?.durationMs ?? 0),
        promptTokens: loop?.promptTokens ?? null,
        completionTokens: loop?.completionTokens ?? null,
      },
      scriptVersion: this.#request.scriptVersion,
      scriptChange: change,
    };
    const now = new Date().toISOString();
    const logs = [
      ...this.#request.skills.map((skill) => ({
        time: now,
        level: 'WARN' as const,
        msg: `the skill ${JSON.stringify(cap(skill, 64))} is not known to this agent: ignored`,
      })),
      ...base.logs,
      {
        time: now,
        level: 'INFO' as const,
        msg: `agentic ${mode}: ${agentic.modelUsage.calls} model calls${change ? `, script ${change.kind.toLowerCase()} (${change.verified ? 'verified' : 'not verified'})` : ''}`,
      },
      ...agentic.errors.map((msg) => ({ time: now, level: 'ERROR' as const, msg })),
    ];
    const outcome: RunOutcome = {
      ...base,
      logs,
      errorMessage: base.status === 'PASSED' ? null : (base.errorMessage ?? this.#errors[0] ?? null),
      agenticCheckResult: agentic,
    };
    return releaseOutcome(outcome, this.#scrubber);
  }
}

/** Most characters of a change's diff (the result schema's bound). */
const MAX_DIFF_CHARS = 262_144;

/** A diff within the schema's bound: cut, with a last line saying so, when the scripts are both near their cap. */
function fitDiff(diff: string): string {
  if (diff.length <= MAX_DIFF_CHARS) return diff;
  return `${diff.slice(0, MAX_DIFF_CHARS - 64)}\n… (the diff is cut here; the script is whole)\n`;
}

/** `text` cut to `max` characters. */
function cap(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
