import type { ServiceApp } from '../../platform/http/service-app.js';
import { Type } from '@sinclair/typebox';
import { Agents } from './agents.js';
import type { ServiceContext } from '../../context.js';
import { AgentErrorReportSchema, AgentErrorReportsQuery, AgentResponseSchema } from './schema.js';
import { IdParams, strict } from '../../platform/http/schema-helpers.js';

/**
 * The agents of an account, for people (not in the spec): `GET /v1/agents`, `GET /v1/agents/{id}`
 * and `GET /v1/agents/{id}/error-reports`. Error reports are a paged route of their own rather
 * than embedded: a crash-looping agent may send hundreds, so the list carries only their count
 * and the time of the last one. What a claim reports (free slots per job class less the jobs it
 * was handed, check types, runtimes) is recorded by the claim route (runs/agent-routes.ts).
 */
export async function agentsRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const agents = new Agents(ctx.db);

  app.get(
    '/v1/agents',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['agents'],
        summary: 'List the agents of the account',
        description:
          'Every agent that claimed jobs with a key of the account (account API keys and private-location keys), most recently seen first.',
        querystring: Type.Object({}, strict),
        response: { 200: Type.Array(AgentResponseSchema) },
      },
    },
    async (request) => agents.list(request.accountId, Date.now()),
  );

  app.get(
    '/v1/agents/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['agents'],
        summary: 'Get an agent',
        params: IdParams,
        response: { 200: AgentResponseSchema },
      },
    },
    async (request) => agents.get(request.accountId, request.params.id, Date.now()),
  );

  app.get(
    '/v1/agents/:id/error-reports',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['agents'],
        summary: 'List the error reports of an agent, newest first',
        params: IdParams,
        querystring: AgentErrorReportsQuery,
        response: { 200: Type.Array(AgentErrorReportSchema) },
      },
    },
    async (request) => agents.errorReports(request.accountId, request.params.id, request.query),
  );
}
