import { Value } from '@sinclair/typebox/value';
import { pino } from 'pino';
import { expect } from 'vitest';
import type { ExecutorContext } from '../../../src/checks/executor.js';
import {
  type Assertion,
  type Job,
  type JobCheck,
  type RunOutcome,
  RunOutcomeSchema,
} from '../../../src/protocol/index.js';

/** An executor context with a silent logger. */
export const context = (signal = new AbortController().signal): ExecutorContext => ({
  signal,
  log: pino({ level: 'silent' }),
});

/** A DNS job as the service hands it out: degraded 500 ms, max 1000 ms (the DNS defaults). */
export function dnsJob(
  request: Record<string, unknown>,
  check: Partial<JobCheck> = {},
  timeoutMs = 30_000,
): Job {
  return {
    jobId: 'job-1',
    accountId: 'acc-1',
    check: {
      id: 'chk-1',
      name: 'dns',
      checkType: 'DNS',
      request: {
        recordType: 'A',
        query: 'www.example.test',
        nameServer: '127.0.0.1',
        port: 53,
        protocol: 'UDP',
        assertions: [],
        ...request,
      },
      shouldFail: false,
      degradedResponseTime: 500,
      maxResponseTime: 1000,
      degradedPacketLossThreshold: null,
      maxPacketLossThreshold: null,
      runtimeId: null,
      ...check,
    },
    environmentVariables: [],
    runLocation: 'private-test',
    runSource: 'SCHEDULER',
    checkSessionId: null,
    attempt: 1,
    timeoutMs,
    leaseMs: 60_000,
  };
}

/** An assertion with an empty property unless `more` gives one. */
export const assertion = (
  source: Assertion['source'],
  comparison: Assertion['comparison'],
  target: string,
  more: Partial<Assertion> = {},
): Assertion => ({
  source,
  comparison,
  target,
  property: '',
  ...more,
});

/** Asserts that `outcome` is a valid RunOutcome (what the agent posts). */
export function expectValidOutcome(outcome: RunOutcome): void {
  expect([...Value.Errors(RunOutcomeSchema, outcome)].map((e) => `${e.path} ${e.message}`)).toEqual([]);
}
