import type { ServiceApp } from '../../http/service-app.js';
import { Type } from '@sinclair/typebox';
import type { CheckType, ClaimRequest } from '../../../protocol/index.js';
import { AGENT_ID_HEADER } from '../../../protocol/index.js';
import { Agents, recordClaimReport } from './agents.js';
import type { ServiceContext } from '../../context.js';
import { AgentErrorReportSchema, AgentErrorReportsQuery, AgentResponseSchema } from './schema.js';
import { IdParams, OpenRecord, strict } from '../../http/schema-helpers.js';

const CLAIM_ROUTE = '/v1/agent/jobs/claim';

/**
 * The agents of an account, for people (not in the spec): `GET /v1/agents`, `GET /v1/agents/{id}`
 * and `GET /v1/agents/{id}/error-reports`. Error reports are a paged route of their own rather
 * than embedded: a crash-looping agent may send hundreds, so the list carries only their count
 * and the time of the last one. What a claim reports (free slots per job class less the jobs it
 * was handed, check types, runtimes) is recorded by a hook on the agent protocol's claim route
 * once its answer is ready.
 */
export async function agentsRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const agents = new Agents(ctx.db);

  // Before the claim's answer is serialised: its jobs are known and the claim succeeded.
  app.addHook('preSerialization', async (request, reply, payload) => {
    if (request.routeOptions.url !== CLAIM_ROUTE || request.method !== 'POST' || reply.statusCode !== 200) {
      return payload;
    }
    const agentId = request.headers[AGENT_ID_HEADER];
    const jobs = (payload as { jobs?: { check?: { checkType?: CheckType } }[] } | null)?.jobs;
    if (typeof agentId !== 'string' || !Array.isArray(jobs)) return payload;
    try {
      const handedOut = jobs.flatMap((j) => (j.check?.checkType ? [j.check.checkType] : []));
      await recordClaimReport(
        ctx.db,
        request.accountId,
        agentId,
        request.body as ClaimRequest,
        handedOut,
        Date.now(),
      );
    } catch (err) {
      request.log.warn({ err, agentId }, 'could not record the claim report of an agent');
    }
    return payload;
  });

  app.get(
    '/v1/agents',
    {
      schema: {
        tags: ['agents'],
        summary: 'List the agents of the account',
        description:
          'Every agent that claimed jobs with a key of the account (account API keys and private-location keys), most recently seen first.',
        querystring: Type.Object({}, strict),
        response: { 200: Type.Array(OpenRecord(AgentResponseSchema)) },
      },
    },
    async (request) => agents.list(request.accountId, Date.now()),
  );

  app.get(
    '/v1/agents/:id',
    {
      schema: {
        tags: ['agents'],
        summary: 'Get an agent',
        params: IdParams,
        response: { 200: OpenRecord(AgentResponseSchema) },
      },
    },
    async (request) => agents.get(request.accountId, request.params.id, Date.now()),
  );

  app.get(
    '/v1/agents/:id/error-reports',
    {
      schema: {
        tags: ['agents'],
        summary: 'List the error reports of an agent, newest first',
        params: IdParams,
        querystring: AgentErrorReportsQuery,
        response: { 200: Type.Array(OpenRecord(AgentErrorReportSchema)) },
      },
    },
    async (request) => agents.errorReports(request.accountId, request.params.id, request.query),
  );
}
