import { pino } from 'pino';
import type { ExecutorContext } from '../../src/checks/executor.js';
import type { CheckType, Job, JobCheck } from '../../src/protocol/index.js';

/** A job of `checkType` carrying `request`, with the check fields overridable. Timeout 5 s by default. */
export function jobOf(
  checkType: CheckType,
  request: Record<string, unknown>,
  overrides: Partial<JobCheck> & { timeoutMs?: number } = {},
): Job {
  const { timeoutMs = 5000, ...check } = overrides;
  return {
    jobId: `job-${Math.random().toString(36).slice(2)}`,
    accountId: 'acc-1',
    check: {
      id: 'check-1',
      name: `${checkType} check`,
      checkType,
      request,
      shouldFail: false,
      degradedResponseTime: null,
      maxResponseTime: null,
      degradedPacketLossThreshold: null,
      maxPacketLossThreshold: null,
      runtimeId: null,
      ...check,
    },
    environmentVariables: [],
    runLocation: 'test-location',
    runSource: 'SCHEDULER',
    checkSessionId: null,
    attempt: 1,
    timeoutMs,
    leaseMs: 60_000,
  };
}

/** An executor context with a silent logger; `signal` never aborts unless given. */
export function contextOf(signal: AbortSignal = new AbortController().signal): ExecutorContext {
  return { signal, log: pino({ level: 'silent' }) };
}
