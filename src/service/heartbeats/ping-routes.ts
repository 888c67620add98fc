import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, notFound } from '../platform/http/errors.js';
import type { RoutePlugin } from '../module.js';
import { PING_BODY_LIMIT_BYTES, type PingInput } from './monitor.js';

/** A ping body: its first PING_BODY_LIMIT_BYTES (+1, to know it was cut) and its full size. */
type PingBody = { kept: Buffer; sizeBytes: number };

/** Ping tokens are 22 base64url characters (newPingToken); anything else is unknown. */
const TOKEN = /^[A-Za-z0-9_-]{22}$/;

/**
 * Reads a ping body of any content type: keeps at most PING_BODY_LIMIT_BYTES + 1 bytes in memory
 * and only counts the rest (a larger body is cut, never refused).
 */
function readPingBody(_request: FastifyRequest, payload: IncomingMessage): Promise<PingBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let sizeBytes = 0;
    payload.on('data', (chunk: Buffer) => {
      sizeBytes += chunk.length;
      const room = PING_BODY_LIMIT_BYTES + 1 - kept;
      if (room > 0) {
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
        chunks.push(part);
        kept += part.length;
      }
    });
    payload.on('end', () => resolve({ kept: Buffer.concat(chunks), sizeBytes }));
    payload.on('error', reject);
  });
}

/**
 * Heartbeat pings (docs/heartbeats.md, "Pinging"): `GET|POST|HEAD /ping/{token}`, `…/start`,
 * `…/fail` and `…/{exitCode}` (0–255; 0 a success). No API key: the token is the only
 * credential and opens nothing but its own heartbeat. Answers `200 OK` as text with
 * `Ping-Body-Limit: 10000`; 404 for an unknown token; 429 (text, `Retry-After` in seconds) past
 * the per-token rate limit; 400 naming `exitCode` for a last segment that is none of these.
 */
export const heartbeatPings: RoutePlugin = async (app, ctx) => {
  const monitor = ctx.heartbeats;
  // A scope of its own: its any-type body parser reaches no other route.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', readPingBody);

    const handle = async (
      request: FastifyRequest,
      reply: FastifyReply,
      token: string,
      action: string | null,
    ) => {
      reply.header('ping-body-limit', String(PING_BODY_LIMIT_BYTES));
      let kind: PingInput['kind'] = 'success';
      let exitCode: number | null = null;
      if (action === 'start') kind = 'start';
      else if (action === 'fail') kind = 'fail';
      else if (action !== null) {
        if (!/^\d{1,3}$/.test(action) || Number(action) > 255) {
          throw new HttpError(
            'OUTPOST_ERR_VALIDATION',
            'params.exitCode must be start, fail or an exit code 0-255',
            {
              field: 'exitCode',
              in: 'params',
              rule: 'exitCode',
            },
          );
        }
        exitCode = Number(action);
        kind = exitCode === 0 ? 'success' : 'fail';
      }
      if (!TOKEN.test(token)) throw notFound('heartbeat', token);
      const body = (request.body as PingBody | undefined) ?? null;
      const sizeBytes = body?.sizeBytes ?? 0;
      const text =
        body && body.kept.length > 0 ? body.kept.subarray(0, PING_BODY_LIMIT_BYTES).toString('utf8') : null;
      const userAgent = request.headers['user-agent'];
      const answer = await monitor.ping({
        token,
        kind,
        exitCode,
        method: request.method,
        remoteAddress: request.ip ?? null,
        userAgent: userAgent === undefined ? null : userAgent.slice(0, 512),
        body: text,
        bodySizeBytes: sizeBytes,
      });
      if (answer.outcome === 'UNKNOWN') throw notFound('heartbeat', token);
      if (answer.outcome === 'RATE_LIMITED') {
        return reply
          .code(429)
          .header('retry-after', String(Math.max(1, Math.ceil(answer.retryAfterMs / 1000))))
          .type('text/plain; charset=utf-8')
          .send('rate limited');
      }
      return reply.code(200).type('text/plain; charset=utf-8').send('OK');
    };

    const options = { schema: { hide: true }, exposeHeadRoute: false } as const;
    scope.route<{ Params: { token: string } }>({
      ...options,
      method: ['GET', 'POST', 'HEAD'],
      url: '/ping/:token',
      handler: (request, reply) => handle(request, reply, request.params.token, null),
    });
    scope.route<{ Params: { token: string; action: string } }>({
      ...options,
      method: ['GET', 'POST', 'HEAD'],
      url: '/ping/:token/:action',
      handler: (request, reply) => handle(request, reply, request.params.token, request.params.action),
    });
  });
};
