import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on loopback speaking the OpenAI chat-completions protocol (`POST
 * /v1/chat/completions`), answering from a scripted conversation: each request is handed to a
 * responder that says what to answer (tool calls, text, a refusal) or how to misbehave (slowly, with a
 * body that is not JSON, with an HTTP error, with no choices). Every request is recorded as received
 * (headers and raw body), so a test can search all the model ever saw.
 */

/** One tool call the scripted model makes; `arguments` as an object (sent as JSON) or raw text. */
export type ScriptedToolCall = { name: string; arguments: Record<string, unknown> | string };

/** What the server answers to one request. */
export type ScriptedReply =
  | { toolCalls: ScriptedToolCall[]; text?: string }
  | { text: string }
  | { refusal: string }
  /** An HTTP error with this status (an OpenAI-style error body). */
  | { status: number }
  /** A 200 whose body is this text (not a chat completion: malformed). */
  | { rawBody: string }
  /** A 200 chat completion with an empty `choices`. */
  | { noChoices: true }
  /** The reply, after `delayMs`. */
  | { delayMs: number; reply: ScriptedReply };

/** A request as the server received it. */
export type RecordedRequest = {
  path: string;
  headers: IncomingMessage['headers'];
  /** The raw body text. */
  body: string;
  /** The parsed body (messages, tools, model), or null when it was not JSON. */
  json: { model?: string; messages?: Array<{ role: string; content?: unknown }> } | null;
};

/** Decides the answer to the `index`-th request (0-based). */
export type Responder = (request: RecordedRequest, index: number) => ScriptedReply;

/** A running server. */
export type ChatCompletionsServer = {
  /** The base URL to configure (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Replaces the responder (and keeps the recorded requests). */
  respond(responder: Responder): void;
  close(): Promise<void>;
};

let completionId = 0;

/** Starts the server with `responder`. */
export async function startChatCompletionsServer(responder: Responder): Promise<ChatCompletionsServer> {
  let current = responder;
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: RecordedRequest['json'] = null;
      try {
        json = JSON.parse(body);
      } catch {
        json = null;
      }
      const recorded: RecordedRequest = { path: req.url ?? '', headers: req.headers, body, json };
      requests.push(recorded);
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const answer = (reply: ScriptedReply): void => {
        if ('delayMs' in reply) {
          const timer = setTimeout(() => {
            timers.delete(timer);
            if (!res.destroyed) answer(reply.reply);
          }, reply.delayMs);
          timers.add(timer);
          return;
        }
        if ('status' in reply) {
          res.writeHead(reply.status, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ error: { message: `scripted HTTP ${reply.status}`, type: 'server_error' } }),
          );
          return;
        }
        if ('rawBody' in reply) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(reply.rawBody);
          return;
        }
        const message: Record<string, unknown> = { role: 'assistant', content: null, refusal: null };
        if ('refusal' in reply) message.refusal = reply.refusal;
        if ('text' in reply && reply.text !== undefined) message.content = reply.text;
        if ('toolCalls' in reply) {
          message.tool_calls = reply.toolCalls.map((call, i) => ({
            id: `call_${requests.length}_${i}`,
            type: 'function',
            function: {
              name: call.name,
              arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
            },
          }));
        }
        const choices =
          'noChoices' in reply
            ? []
            : [
                {
                  index: 0,
                  message,
                  finish_reason: 'toolCalls' in reply ? 'tool_calls' : 'stop',
                  logprobs: null,
                },
              ];
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: `chatcmpl-${++completionId}`,
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: json?.model ?? 'scripted',
            choices,
            usage: {
              prompt_tokens: Math.ceil(body.length / 4),
              completion_tokens: 20,
              total_tokens: Math.ceil(body.length / 4) + 20,
            },
          }),
        );
      };
      answer(current(recorded, requests.length - 1));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    respond(next) {
      current = next;
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The text of every message of a request (what the model was shown), joined. */
export function shownText(request: RecordedRequest): string {
  return (request.json?.messages ?? [])
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')))
    .join('\n');
}
