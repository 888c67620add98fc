import type { AssertionResult } from '../../protocol/index.js';
import { Scrubber } from '../../common/scrub.js';
import { type BodyWorkInput, type BodyWorkOutput, doBodyWork } from './body-work.js';
import { evaluateAssertions, jsonPathSource } from './engine.js';

/** A task of the assertion workers: one API run's body work, or JSONPath assertions over a document. */
export type WorkerTask = ({ kind: 'body' } & BodyWorkInput) | JsonPathTask;

/** JSONPath assertions (all of one source) over a JSON document (a DNS answer, an ICMP result). */
export type JsonPathTask = { kind: 'json'; assertions: BodyWorkInput['assertions']; document: unknown };

/** Entry of the assertion worker threads (off-thread.ts runs it in a piscina pool). */
export default function work(task: WorkerTask): BodyWorkOutput | AssertionResult[] {
  if (task.kind === 'json') {
    const source = jsonPathSource(task.document);
    const sources = Object.fromEntries(task.assertions.map((a) => [a.source, source]));
    return evaluateAssertions(task.assertions, sources).results;
  }
  return doBodyWork(task, new Scrubber(task.secrets));
}
