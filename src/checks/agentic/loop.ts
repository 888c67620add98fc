/**
 * The conversation of one AGENTIC run with its model: the model asks for tools, the agent runs the
 * browser ones in the runner's tool session and answers, until the model calls `finish`, or the run
 * ends it: its budget of model calls spent, a malformed or refused answer, the same call repeated, a
 * model call that failed or timed out, the runner gone. Never throws for what the model does.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { RunnerToolSession } from '../../browser/runner-process.js';
import type { Scrubber } from '../../common/scrub.js';
import type { AgenticAssertion, AgenticStep } from '../../protocol/index.js';
import { ModelCallError, type ModelClient } from './model-client.js';
import { isBrowserTool, MODEL_TOOLS, VERIFY_TOOLS } from './tools.js';

/** The same tool call (name and arguments) this many times in a row ends the run as a loop. */
export const MAX_REPEATED_CALLS = 4;
/** Longest tool output kept in a step, characters (the schema's 8 KiB). */
const MAX_STEP_CHARS = 8_000;
/** Longest arguments text of one tool call accepted, characters. */
const MAX_ARGUMENT_CHARS = 16_384;
/** Answers without a tool call the model may give before the run ends (it is reminded to call a tool). */
const MAX_IDLE_ANSWERS = 2;

/** What the conversation ended with. */
export type LoopOutcome = {
  /** The `finish` call's verdict; null when the model never finished. */
  finished: { passed: boolean; summary: string } | null;
  /** Statements of the successful actions and verifications, in order. */
  statements: string[];
  /** From `finish` and from the verification tools. */
  assertions: AgenticAssertion[];
  suggestions: string[];
  steps: AgenticStep[];
  /** Why the run ended without `finish` (or the model misbehaved), each a sentence. */
  errors: string[];
  calls: number;
  durationMs: number;
  promptTokens: number | null;
  completionTokens: number | null;
};

/** What a conversation starts from. */
export type LoopInput = {
  model: ModelClient;
  tools: RunnerToolSession;
  /** The system and user messages. */
  messages: ChatCompletionMessageParam[];
  maxModelCalls: number;
  /** Time one tool call may take before the runner is killed, ms. */
  toolTimeoutMs: number;
  /** Scrubs every text that enters a step or goes back to the model. */
  scrubber: Scrubber;
  signal: AbortSignal;
};

const cut = (text: string, max = MAX_STEP_CHARS) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** Runs the conversation until `finish` or a reason to stop. */
export async function runLoop(input: LoopInput): Promise<LoopOutcome> {
  const { model, tools, scrubber, signal } = input;
  const messages = [...input.messages];
  const out: LoopOutcome = {
    finished: null,
    statements: [],
    assertions: [],
    suggestions: [],
    steps: [],
    errors: [],
    calls: 0,
    durationMs: 0,
    promptTokens: null,
    completionTokens: null,
  };
  const step = (s: Omit<AgenticStep, 'tool' | 'input' | 'output' | 'text'> & Partial<AgenticStep>) => {
    if (out.steps.length >= 500) return;
    out.steps.push({
      kind: s.kind,
      tool: s.tool ?? null,
      input: s.input == null ? null : cut(scrubber.text(s.input)),
      output: s.output == null ? null : cut(scrubber.text(s.output)),
      text: s.text == null ? null : cut(scrubber.text(s.text)),
      startedAt: s.startedAt,
      durationMs: s.durationMs,
    });
  };
  let lastCall = '';
  let repeats = 0;
  let idle = 0;
  for (;;) {
    if (signal.aborted) {
      out.errors.push('the run reached its time limit before the model finished');
      return out;
    }
    if (out.calls >= input.maxModelCalls) {
      out.errors.push(
        `the model did not finish within the run's budget of ${input.maxModelCalls} model calls`,
      );
      return out;
    }
    out.calls++;
    const startedAt = new Date().toISOString();
    let reply: Awaited<ReturnType<ModelClient['complete']>>;
    try {
      reply = await model.complete(messages, MODEL_TOOLS, signal);
    } catch (err) {
      const ms = err instanceof ModelCallError ? err.durationMs : 0;
      out.durationMs += ms;
      out.errors.push(`model call ${out.calls} failed: ${scrubber.text((err as Error).message)}`);
      return out;
    }
    out.durationMs += reply.durationMs;
    if (reply.promptTokens !== null) out.promptTokens = (out.promptTokens ?? 0) + reply.promptTokens;
    if (reply.completionTokens !== null)
      out.completionTokens = (out.completionTokens ?? 0) + reply.completionTokens;
    step({
      kind: 'MESSAGE',
      text: reply.text ?? reply.refusal ?? '',
      startedAt,
      durationMs: reply.durationMs,
    });
    if (reply.refusal !== null) {
      out.errors.push(`the model refused: ${cut(scrubber.text(reply.refusal), 500)}`);
      return out;
    }
    messages.push({
      role: 'assistant',
      content: reply.text,
      ...(reply.toolCalls.length > 0
        ? {
            tool_calls: reply.toolCalls.map((c) => ({
              id: c.id,
              type: 'function' as const,
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : {}),
    });
    if (reply.toolCalls.length === 0) {
      if (++idle > MAX_IDLE_ANSWERS) {
        out.errors.push('the model stopped calling tools without calling finish');
        return out;
      }
      messages.push({
        role: 'user',
        content: 'Continue with the tools; call finish when the goal is judged.',
      });
      continue;
    }
    idle = 0;
    for (const call of reply.toolCalls) {
      const callStart = new Date().toISOString();
      if (call.arguments.length > MAX_ARGUMENT_CHARS) {
        out.errors.push(`the model sent arguments of ${call.arguments.length} characters to ${call.name}`);
        return out;
      }
      let args: Record<string, unknown>;
      try {
        const parsed: unknown = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
          throw new Error('not an object');
        args = parsed as Record<string, unknown>;
      } catch {
        out.errors.push(`the model sent malformed JSON arguments to the tool ${cut(call.name, 64)}`);
        step({
          kind: 'TOOL_CALL',
          tool: cut(call.name, 128),
          input: call.arguments,
          output: 'malformed arguments',
          startedAt: callStart,
          durationMs: 0,
        });
        return out;
      }
      const key = `${call.name} ${JSON.stringify(args)}`;
      repeats = key === lastCall ? repeats + 1 : 1;
      lastCall = key;
      if (repeats >= MAX_REPEATED_CALLS) {
        out.errors.push(`the model repeated the same ${call.name} call ${repeats} times in a row (a loop)`);
        return out;
      }
      if (call.name === 'finish') {
        finish(out, args, scrubber);
        step({
          kind: 'TOOL_CALL',
          tool: 'finish',
          input: call.arguments,
          output: null,
          startedAt: callStart,
          durationMs: 0,
        });
        return out;
      }
      if (!isBrowserTool(call.name)) {
        out.errors.push(`the model called an unknown tool ${JSON.stringify(cut(call.name, 64))}`);
        step({
          kind: 'TOOL_CALL',
          tool: cut(call.name, 128),
          input: call.arguments,
          output: 'unknown tool',
          startedAt: callStart,
          durationMs: 0,
        });
        return out;
      }
      const t0 = performance.now();
      const answer = await tools.call(call.name, args, input.toolTimeoutMs);
      const output = scrubber.text(answer.output);
      step({
        kind: 'TOOL_CALL',
        tool: call.name,
        input: call.arguments,
        output,
        startedAt: callStart,
        durationMs: Math.round(performance.now() - t0),
      });
      if (answer.code !== null && (answer.ok || VERIFY_TOOLS.has(call.name)))
        out.statements.push(scrubber.text(answer.code));
      if (VERIFY_TOOLS.has(call.name) && out.assertions.length < 200) {
        out.assertions.push({
          condition: cut(scrubber.text(`${call.name} ${call.arguments}`), 2000),
          passed: answer.ok,
          actual: answer.ok ? null : cut(output, 2000),
          expected: null,
        });
      }
      messages.push({ role: 'tool', tool_call_id: call.id, content: output });
      if (!tools.alive) {
        out.errors.push(`the browser tool session ended: ${cut(output, 500)}`);
        return out;
      }
    }
  }
}

/** Takes `finish`'s verdict, summary, assertions and suggestions (bounded, scrubbed). */
function finish(out: LoopOutcome, args: Record<string, unknown>, scrubber: Scrubber): void {
  const text = (v: unknown, max: number) => (typeof v === 'string' ? cut(scrubber.text(v), max) : null);
  out.finished = { passed: args.passed === true, summary: text(args.summary, 4000) ?? '' };
  if (Array.isArray(args.assertions)) {
    for (const a of args.assertions.slice(0, 200 - out.assertions.length)) {
      if (a === null || typeof a !== 'object') continue;
      const r = a as Record<string, unknown>;
      const condition = text(r.condition, 2000);
      if (condition === null) continue;
      out.assertions.push({
        condition,
        passed: r.passed === true,
        actual: text(r.actual, 2000),
        expected: text(r.expected, 2000),
      });
    }
  }
  if (Array.isArray(args.suggestions)) {
    for (const s of args.suggestions.slice(0, 50)) {
      const t = text(s, 2000);
      if (t !== null) out.suggestions.push(t);
    }
  }
}
