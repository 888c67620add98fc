import type { RunLog } from '../protocol/index.js';

/** Why a script run failed, as a code for tests and metrics; the reason text says it in words. */
export type ScriptFailureCode =
  /** The script threw or rejected. */
  | 'THREW'
  /** It ran past its time limit; the whole process group was killed. */
  | 'TIMEOUT'
  /** It called process.exit, or the process died of a signal. */
  | 'EXITED'
  /** It wrote more output than the limit allows. */
  | 'OUTPUT_LIMIT'
  /** It ran out of its memory limit. */
  | 'OUT_OF_MEMORY'
  /** Node's permission model refused something (file outside the sandbox, child process, worker). */
  | 'PERMISSION_DENIED'
  /** The sandbox itself could not run the script (spawn failed, runtime missing). */
  | 'SANDBOX_ERROR'
  /** The caller's signal aborted the run. */
  | 'ABORTED';

/**
 * One script to run in a child process of the account (docs/architecture.md, "The agent"): a
 * process that runs no other account's scripts, in a fresh `vm` context with nothing of an
 * earlier script visible.
 *
 * The script is the body of an async function: top-level `await` works, `return` ends it.
 * It sees the globals `request` (setup) and/or `response` (teardown) as given in `context`,
 * `process.env` holding exactly `env`, `console`, and `require` resolving only the pinned
 * runtime's dependencies (plus Node built-ins the permission model allows).
 */
export type ScriptRunRequest = {
  /** JavaScript source. */
  code: string;
  /** For messages: `setup script`, `teardown snippet "login" (3)`. */
  name: string;
  /**
   * The account the script belongs to (the job's `accountId`), 1 to 200 characters. Required:
   * a process that ran a script of one account never runs a script of another. A request
   * without it fails with SANDBOX_ERROR.
   */
  accountId: string;
  /** Runtime whose dependencies `require` resolves (`2026.04`). */
  runtimeId: string;
  /** The whole environment of the script: the check's variables and the runtime variables. */
  env: Record<string, string>;
  /**
   * JSON-serialisable objects exposed as globals by name (`request`, `response`). The script may
   * mutate them; their final values come back in the result's `context`.
   */
  context: Record<string, unknown>;
  /** Time limit, milliseconds. Default 10 000 (docs/checks.md, "API"). */
  timeoutMs?: number;
  /** Aborts the run: the process group is killed and the result is ABORTED. */
  signal?: AbortSignal;
};

/** What a script run produced. `logs` are the script's console output, in order, always present. */
export type ScriptRunResult =
  | {
      ok: true;
      /** The `context` objects as the script left them. */
      context: Record<string, unknown>;
      logs: RunLog[];
      /** Values the script put in `process.env.SERVICE_SECRET_*`: callers add them to the scrubber. */
      secrets: string[];
      /** Wall time of the script in its process, milliseconds. */
      durationMs: number;
    }
  | {
      ok: false;
      code: ScriptFailureCode;
      /** One line for the result's errorMessage: `setup script timed out after 10000 ms`. */
      reason: string;
      logs: RunLog[];
      secrets: string[];
      durationMs: number;
    };

/** Runs user scripts (implemented by `ScriptSandbox` in ./sandbox.ts). */
export interface ScriptRunner {
  run(request: ScriptRunRequest): Promise<ScriptRunResult>;
  /** Kills warm processes and removes their temp dirs. Idempotent. */
  close(): Promise<void>;
}
