import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { pingStore } from '../store/dialect.js';
import type { Database } from '../store/database.js';

/** How long the readiness probe waits for the store's answer, ms: less than a probe's default timeout (1 s). */
const STORE_ANSWER_MS = 800;

/** Options of {@link registerHealthRoutes}. */
export type HealthOptions = {
  db: Kysely<Database>;
  /** Aborts when the service begins to close: readiness then answers 503 so load balancers drain it first. */
  shutdown: AbortSignal;
};

/**
 * The service's probes, on its own port, answered without a key (the paths of the agent's health server):
 * - `GET /-/liveness`: 200 `ok` while the process serves HTTP;
 * - `GET /-/readiness`: 200 `ok` when the store answers `select 1` within 800 ms, else 503 with the reason
 *   (`store unreachable`, `closing`), so an orchestrator sends no traffic to a replica that cannot reach
 *   PostgreSQL and takes it back when the store answers again, without restarting it.
 * Hidden from the OpenAPI document (they are not the hosted API's).
 */
export function registerHealthRoutes(app: FastifyInstance, { db, shutdown }: HealthOptions): void {
  const text = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' };
  app.get('/-/liveness', { schema: { hide: true } }, async (_request, reply) =>
    reply.code(200).headers(text).send('ok\n'),
  );
  app.get('/-/readiness', { schema: { hide: true } }, async (_request, reply) => {
    if (shutdown.aborted) return reply.code(503).headers(text).send('closing\n');
    const reason = await storeProblem(db);
    if (reason === null) return reply.code(200).headers(text).send('ok\n');
    return reply.code(503).headers(text).send(`${reason}\n`);
  });
}

/** Null when the store answers within STORE_ANSWER_MS; else why not (one line, no connection details). */
async function storeProblem(db: Kysely<Database>): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`store did not answer within ${STORE_ANSWER_MS} ms`), STORE_ANSWER_MS);
  });
  try {
    return await Promise.race([
      pingStore(db as unknown as Kysely<unknown>).then(
        () => null,
        () => 'store unreachable',
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
