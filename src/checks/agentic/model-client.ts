/**
 * The agent's client of the operator's model: any OpenAI-compatible chat-completions endpoint
 * (`OUTPOST_AGENT_MODEL_URL`, docs/checks.md, "Agentic"), called from the agent process only (the browser
 * runner never sees the key). Every call is bounded: its answer's body (4 MiB), its time (per call) and
 * the run's signal; tokens are counted from `usage` when the endpoint reports it.
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { OutpostError } from '../../common/errors.js';
import { secretVariable } from '../../common/secret-file.js';

/** Largest answer body read from the model endpoint, bytes. */
export const MAX_MODEL_RESPONSE_BYTES = 4 * 1024 * 1024;
/** Default time one model call may take, ms. */
export const DEFAULT_MODEL_CALL_TIMEOUT_MS = 60_000;

/** Where the agent's model is and how it is called. */
export type ModelEndpoint = {
  /** Base URL of the chat-completions API (`/chat/completions` is appended), e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** The model's name as the endpoint knows it. */
  model: string;
  /** Bearer token; null when the endpoint needs none. */
  apiKey: string | null;
  /** Longest single call, ms; default 60 000. */
  callTimeoutMs?: number;
};

/**
 * The model endpoint the agent's environment configures: `OUTPOST_AGENT_MODEL_URL`,
 * `OUTPOST_AGENT_MODEL` and `OUTPOST_AGENT_MODEL_API_KEY` (or `OUTPOST_AGENT_MODEL_API_KEY_FILE`, a
 * file holding it). Null when no URL is set: the agent then makes no model call.
 *
 * @throws OutpostError OUTPOST_ERR_CONFIG when the URL is not http(s), the model name is missing, both
 *   key variables are set, or the key file cannot be read (the key itself is never in the message).
 */
export function modelEndpointFromEnv(env: NodeJS.ProcessEnv): ModelEndpoint | null {
  const url = env.OUTPOST_AGENT_MODEL_URL?.trim() ?? '';
  if (url === '') return null;
  const invalid = (why: string) =>
    new OutpostError('OUTPOST_ERR_CONFIG', `invalid agent configuration:\n- ${why}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid('OUTPOST_AGENT_MODEL_URL must be an http(s) URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw invalid('OUTPOST_AGENT_MODEL_URL must be an http(s) URL');
  const model = env.OUTPOST_AGENT_MODEL?.trim() ?? '';
  if (model === '')
    throw invalid('OUTPOST_AGENT_MODEL must name the model when OUTPOST_AGENT_MODEL_URL is set');
  const apiKey = secretVariable(env, 'OUTPOST_AGENT_MODEL_API_KEY') ?? null;
  return { baseUrl: url.replace(/\/+$/, ''), model, apiKey };
}

/** One tool call the model asked for: its id, name and arguments as the raw JSON text it sent. */
export type ModelToolCall = { id: string; name: string; arguments: string };

/** What one model call answered. */
export type ModelReply = {
  /** The assistant's text, null when none. */
  text: string | null;
  toolCalls: ModelToolCall[];
  /** The model's refusal text, when it refused. */
  refusal: string | null;
  /** Tokens the endpoint reported, null when it reported none. */
  promptTokens: number | null;
  completionTokens: number | null;
  durationMs: number;
};

/** A model call that failed: its reason in words, the time it took. */
export class ModelCallError extends Error {
  readonly durationMs: number;
  constructor(message: string, durationMs: number) {
    super(message);
    this.name = 'ModelCallError';
    this.durationMs = durationMs;
  }
}

/**
 * A `fetch` that reads at most `maxBytes` of an answer's body (a longer one fails the call) and stops
 * with `signal`.
 */
export function cappedFetch(maxBytes: number): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const reader = response.body?.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    if (reader !== undefined) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        total += value.byteLength;
        if (total > maxBytes) {
          await reader.cancel().catch(() => {});
          throw new Error(`the model's answer is larger than ${maxBytes} bytes`);
        }
        chunks.push(value);
      }
    }
    return new Response(Buffer.concat(chunks), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The chat-completions client of one endpoint. */
export class ModelClient {
  readonly endpoint: ModelEndpoint;
  readonly #client: OpenAI;
  readonly #timeoutMs: number;

  constructor(endpoint: ModelEndpoint) {
    this.endpoint = endpoint;
    this.#timeoutMs = endpoint.callTimeoutMs ?? DEFAULT_MODEL_CALL_TIMEOUT_MS;
    this.#client = new OpenAI({
      baseURL: endpoint.baseUrl,
      // The SDK requires a key; an endpoint without one (a local Ollama) ignores the header.
      apiKey: endpoint.apiKey ?? 'none',
      fetch: cappedFetch(MAX_MODEL_RESPONSE_BYTES),
      maxRetries: 0,
      timeout: this.#timeoutMs,
    });
  }

  /**
   * One chat completion with `tools` (the model may call them, `tool_choice: auto`), bounded by the
   * call timeout and `signal`.
   *
   * @throws ModelCallError saying why: the endpoint's status and message, a timeout, an answer too large
   *   or not a chat completion, no choices.
   */
  async complete(
    messages: ChatCompletionMessageParam[],
    tools: ChatCompletionTool[],
    signal: AbortSignal,
  ): Promise<ModelReply> {
    const t0 = performance.now();
    const elapsed = () => Math.round(performance.now() - t0);
    const callSignal = AbortSignal.any([signal, AbortSignal.timeout(this.#timeoutMs)]);
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await this.#client.chat.completions.create(
        { model: this.endpoint.model, messages, tools, tool_choice: 'auto' },
        { signal: callSignal, timeout: this.#timeoutMs, maxRetries: 0 },
      );
    } catch (err) {
      throw new ModelCallError(describeCallError(err, signal, this.#timeoutMs, elapsed()), elapsed());
    }
    const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
    if (choice === undefined || choice.message === undefined || choice.message === null)
      throw new ModelCallError('the model answered no choices', elapsed());
    const message = choice.message;
    const toolCalls: ModelToolCall[] = [];
    for (const call of message.tool_calls ?? []) {
      if (call.type !== 'function' || typeof call.function?.name !== 'string')
        throw new ModelCallError('the model answered a tool call that is not a function call', elapsed());
      toolCalls.push({
        id: String(call.id ?? ''),
        name: call.function.name,
        arguments: typeof call.function.arguments === 'string' ? call.function.arguments : '',
      });
    }
    const usage = completion.usage;
    const count = (n: unknown) => (typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : null);
    return {
      text: typeof message.content === 'string' && message.content !== '' ? message.content : null,
      toolCalls,
      refusal: typeof message.refusal === 'string' && message.refusal !== '' ? message.refusal : null,
      promptTokens: count(usage?.prompt_tokens),
      completionTokens: count(usage?.completion_tokens),
      durationMs: elapsed(),
    };
  }
}

/** Why a call failed, in words (never the key: the SDK's errors hold none). */
function describeCallError(err: unknown, signal: AbortSignal, timeoutMs: number, ms: number): string {
  if (signal.aborted) return 'the run ended while the model was answering';
  if (err instanceof OpenAI.APIConnectionTimeoutError || ms >= timeoutMs - 5)
    return `the model did not answer within ${timeoutMs} ms`;
  if (err instanceof OpenAI.APIError && typeof err.status === 'number')
    return `the model endpoint answered HTTP ${err.status}: ${String(err.message).slice(0, 300)}`;
  const cause = (err as { cause?: unknown })?.cause;
  const why = cause instanceof Error ? cause.message : (err as Error)?.message;
  return `the model endpoint could not be called: ${String(why ?? err).slice(0, 300)}`;
}
