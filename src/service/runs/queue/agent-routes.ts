import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceApp } from '../../platform/http/service-app.js';
import { Type } from '@sinclair/typebox';
import {
  AckRequestSchema,
  AckResponseSchema,
  AGENT_ID_HEADER,
  AgentEventSchema,
  CheckResultSchema,
  ClaimRequestSchema,
  ClaimResponseSchema,
  type ClaimRequest,
  type Job,
  LeaseResponseSchema,
  LOCATIONS,
  MAX_RESULT_SIZE_BYTES,
  PROTOCOL_VERSION,
  ResultBatchRequestSchema,
  ResultBatchResponseSchema,
} from '../../../protocol/index.js';
import { HttpError } from '../../platform/http/errors.js';
import { linkSignal } from '../../../common/linked-signal.js';
import { abortWhenClientGone } from '../../platform/http/client-gone.js';
import type { AgentScope } from './queue.js';
import { recordClaimReport } from '../../resources/index.js';
import { AgentQueries } from '../../resources/index.js';
import type { ServiceContext } from '../../context.js';
import { writeDoc } from '../../platform/store/schema.js';
import { NoContent, ResourceId } from '../../platform/http/schema-helpers.js';

const JobParams = Type.Object({ jobId: ResourceId }, { additionalProperties: false });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The agent behind a request: its `x-agent-id` (a UUID) and what its key lets it serve. An
 * agent is known by (account, agent id), and is bound to the private location of the key it
 * first registered with (none for an account API key): the same id with another location's key
 * is refused, so a key of location a cannot act as an agent of location b. With `claim` (claims) the
 * agent's version, host name, last-seen time and location are recorded.
 * @throws HttpError 400 OUTPOST_ERR_VALIDATION naming the header when the agent id is missing or not a UUID;
 *   409 OUTPOST_ERR_AGENT_KEY_MISMATCH when the id is bound to another location's key.
 */
export async function agentScopeOf(
  ctx: ServiceContext,
  request: FastifyRequest,
  claim?: Pick<ClaimRequest, 'agentVersion' | 'hostName' | 'locations'>,
): Promise<AgentScope> {
  const agentId = request.headers[AGENT_ID_HEADER];
  if (typeof agentId !== 'string' || !UUID.test(agentId)) {
    throw new HttpError('OUTPOST_ERR_VALIDATION', `header ${AGENT_ID_HEADER} must be a UUID`, {
      field: AGENT_ID_HEADER,
      in: 'headers',
    });
  }
  const now = Date.now();
  const location = request.privateLocation;
  const locationId = location?.id ?? null;
  const agents = new AgentQueries(ctx.db);
  const known = await agents.get(request.accountId, agentId);
  if (known && known.location_id !== locationId) {
    throw new HttpError(
      'OUTPOST_ERR_AGENT_KEY_MISMATCH',
      `agent ${agentId} is registered with another key's location`,
      {
        field: AGENT_ID_HEADER,
        in: 'headers',
      },
    );
  }
  if (claim !== undefined) {
    await agents.recordSeen(request.accountId, agentId, claim.agentVersion, locationId, now, claim.hostName);
  }
  // A private-location key serves its own location only; an account key the data-center locations its claim
  // names (every one when it names none), never a private location.
  const locations = location ? [location.slug] : [...(claim?.locations ?? LOCATIONS)];
  const version = claim?.agentVersion ?? known?.version ?? '';
  const hostName = claim?.hostName ?? known?.host_name ?? null;
  return { accountId: request.accountId, agentId, locations, agent: { id: agentId, version, hostName } };
}

/**
 * The agent protocol (docs/protocol.md). An agent authenticating
 * with an account API key serves every location of the account; one with a
 * private-location key (`pl_…`) serves that location only (`AgentScope.locations`
 * = its slug) and is recorded against it in `agents.location_id`.
 * Artifact uploads are in runs/artifacts/routes.ts; results are stored by runs/results/ingest.ts.
 */
export async function agentRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const scopeOf = (request: FastifyRequest) => agentScopeOf(ctx, request);

  claimRoute(app, ctx);

  app.post(
    '/v1/agent/jobs/ack',
    {
      config: { permission: 'agent' },
      schema: {
        summary: 'Acknowledge the jobs of a claim: their leases start now',
        body: AckRequestSchema,
        response: { 200: AckResponseSchema },
      },
    },
    async (request) => {
      const outcome = await ctx.queue.acknowledge(await scopeOf(request), request.body.jobIds, Date.now());
      return { ...outcome, leaseMs: ctx.queue.leaseMs };
    },
  );

  app.post(
    '/v1/agent/stopped',
    {
      config: { permission: 'agent' },
      schema: {
        summary: 'Say the agent stopped: it shows as disconnected at once',
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const scope = await scopeOf(request);
      await new AgentQueries(ctx.db).recordStopped(scope.accountId, scope.agentId, Date.now());
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/agent/jobs/:jobId/lease',
    {
      config: { permission: 'agent' },
      schema: {
        summary: 'Renew the lease of a running job',
        params: JobParams,
        response: { 200: LeaseResponseSchema },
      },
    },
    async (request) => {
      const { jobId } = request.params;
      const leaseExpiresAt = await ctx.queue.renewLease(await scopeOf(request), jobId, Date.now());
      return { leaseExpiresAt: new Date(leaseExpiresAt).toISOString(), leaseMs: ctx.queue.leaseMs };
    },
  );

  app.post(
    '/v1/agent/jobs/:jobId/result',
    {
      config: { permission: 'agent' },
      schema: {
        summary: 'Post the result of a job (idempotent); the service decides FINAL or ATTEMPT',
        params: JobParams,
        body: CheckResultSchema,
        response: {
          200: Type.Object({
            stored: Type.Boolean(),
            duplicate: Type.Boolean(),
            /** As stored: ATTEMPT when the job's retry strategy queued another attempt. */
            resultType: Type.Union([Type.Literal('FINAL'), Type.Literal('ATTEMPT')]),
          }),
        },
      },
      bodyLimit: 8 * 1024 * 1024,
    },
    async (request) => {
      const { jobId } = request.params;
      // Result hooks run from the outbox the result was stored with (outbox.ts), not here; the
      // ingest wakes the session's waiters and, for a queued retry, the long polls.
      const { duplicate, result } = await ctx.queue.results.submitResult(
        await scopeOf(request),
        jobId,
        request.body,
        Date.now(),
      );
      return { stored: true, duplicate, resultType: result.resultType };
    },
  );

  app.post(
    '/v1/agent/results',
    {
      config: { permission: 'agent' },
      schema: {
        summary: 'Post the results of several jobs at once (each idempotent), stored in one transaction',
        body: ResultBatchRequestSchema,
        response: { 200: ResultBatchResponseSchema },
      },
      // The results' limit and the envelope's few bytes per item (docs/protocol.md, "Results in batches").
      bodyLimit: MAX_RESULT_SIZE_BYTES + 64 * 1024,
    },
    async (request) => {
      const answers = await ctx.queue.results.submitResults(
        await scopeOf(request),
        request.body.results,
        Date.now(),
      );
      return {
        results: answers.map((answer) =>
          answer.error
            ? {
                jobId: answer.jobId,
                stored: false,
                duplicate: false,
                resultType: null,
                error: {
                  statusCode: answer.error.statusCode,
                  code: answer.error.code,
                  message: answer.error.message,
                },
              }
            : {
                jobId: answer.jobId,
                stored: true,
                duplicate: answer.outcome.duplicate,
                resultType: answer.outcome.result.resultType,
                error: null,
              },
        ),
      };
    },
  );

  app.post(
    '/v1/agent/events',
    {
      config: { permission: 'agent' },
      schema: {
        summary: 'Report an agent error (opt-out)',
        body: AgentEventSchema,
        response: { 202: Type.Object({ accepted: Type.Boolean() }) },
      },
    },
    async (request, reply) => {
      const scope = await scopeOf(request);
      await new AgentQueries(ctx.db).recordEvent(
        scope.accountId,
        scope.agentId,
        writeDoc(request.body),
        Date.now(),
      );
      return reply.code(202).send({ accepted: true });
    },
  );
}

/**
 * `POST /v1/agent/jobs/claim`: the agent's long poll (JobQueue.claimWait), answered with the jobs it
 * may run now; what the claim reported is recorded for `GET /v1/agents`.
 * @throws HttpError 400 OUTPOST_ERR_PROTOCOL for another protocol version (and see agentScopeOf).
 */
function claimRoute(app: ServiceApp, ctx: ServiceContext): void {
  app.post(
    '/v1/agent/jobs/claim',
    {
      config: { permission: 'agent' },
      schema: {
        summary: 'Claim jobs (long poll up to waitSeconds)',
        body: ClaimRequestSchema,
        response: { 200: ClaimResponseSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (body.protocolVersion !== PROTOCOL_VERSION) {
        throw new HttpError(
          'OUTPOST_ERR_PROTOCOL',
          `protocolVersion ${body.protocolVersion} is not supported; this service speaks ${PROTOCOL_VERSION}`,
          { field: 'protocolVersion', in: 'body' },
        );
      }
      const scope = await agentScopeOf(ctx, request, body);
      const wait = linkSignal([ctx.shutdown]);
      // The agent went away (it stopped, or its client gave up): stop waiting, hand it nothing more.
      abortWhenClientGone(reply, wait);
      const heartbeats =
        body.heartbeatSeconds !== undefined && body.waitSeconds > 0
          ? startHeartbeats(reply, body.heartbeatSeconds * 1000)
          : undefined;
      let jobs: Job[];
      try {
        jobs = await ctx.queue
          .claimWait(
            scope,
            {
              checkTypes: body.checkTypes,
              freeSlots: body.freeSlots,
              runtimes: body.runtimes,
              acknowledges: body.acknowledges === true,
            },
            body.waitSeconds * 1000,
            wait.signal,
          )
          .finally(() => wait.dispose());
      } catch (err) {
        // The status went out with the first heartbeat: the agent learns of the failure by a reset connection,
        // which it retries like any transient failure. Nothing was claimed (the claim's transaction rolled back).
        if (!heartbeats) throw err;
        heartbeats.stop();
        request.log.warn({ err, agentId: scope.agentId }, 'claim failed after its heartbeats began');
        reply.raw.destroy();
        return reply;
      }
      if (jobs.length > 0) request.log.debug({ jobs: jobs.map((j) => j.jobId) }, 'jobs claimed');
      // What the claim reported (free slots less the jobs handed out), for GET /v1/agents.
      try {
        const handedOut = jobs.map((j) => j.check.checkType);
        await recordClaimReport(ctx.db, scope.accountId, scope.agentId, body, handedOut, Date.now());
      } catch (err) {
        request.log.warn({ err, agentId: scope.agentId }, 'could not record the claim report of an agent');
      }
      if (!heartbeats) return { jobs };
      heartbeats.stop();
      try {
        reply.raw.end(reply.serialize({ jobs }));
      } catch (err) {
        // Fastify can no longer answer for a hijacked reply: end the connection rather than leave it open.
        request.log.error({ err, agentId: scope.agentId }, 'claim answer could not be written');
        reply.raw.destroy();
      }
      return reply;
    },
  );
}

/**
 * Starts the heartbeats of a waiting claim (ClaimRequest `heartbeatSeconds`): takes the response over from
 * Fastify, sends its status and headers now, then one space every `intervalMs` until `stop`. Proxies are asked
 * not to buffer (`X-Accel-Buffering: no`, which nginx honours), since a held-back heartbeat reads as a dead
 * service to the agent.
 */
function startHeartbeats(reply: FastifyReply, intervalMs: number): { stop(): void } {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  raw.flushHeaders();
  const timer = setInterval(() => {
    if (!raw.destroyed) raw.write(' ');
  }, intervalMs);
  return { stop: () => clearInterval(timer) };
}
