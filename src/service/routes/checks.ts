import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { CheckStore, mergeCheckUpdate, newCheckDoc, presentCheck } from '../checks.js';
import { notFound } from '../errors.js';
import {
  AutoAssignAlertsQuery,
  CreateDnsCheckBody,
  CreateIcmpCheckBody,
  CreateTcpCheckBody,
  CreateUrlCheckBody,
  UpdateCheckBody,
} from '../schemas/check.js';
import { IdParams } from '../schemas/common.js';
import type { ServiceContext } from '../context.js';

/** Check routes: create (ICMP, DNS, TCP, URL), read, list, update, delete (spec, "Checks"). */
export async function checkRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  const checks = new CheckStore(ctx.db);

  const creates = [
    ['icmp', 'ICMP', CreateIcmpCheckBody],
    ['dns', 'DNS', CreateDnsCheckBody],
    ['tcp', 'TCP', CreateTcpCheckBody],
    ['url', 'URL', CreateUrlCheckBody],
  ] as const;
  for (const [path, checkType, body] of creates) {
    app.post(
      `/v1/checks/${path}`,
      { schema: { body, querystring: AutoAssignAlertsQuery, tags: ['checks'] } },
      async (request, reply) => {
        const now = new Date();
        const doc = newCheckDoc(checkType, request.body as Record<string, unknown>, now);
        await checks.insert(request.accountId, doc, now.getTime());
        ctx.log.info({ checkId: doc.id, checkType, accountId: request.accountId }, 'check created');
        return reply.code(201).send(presentCheck(doc));
      },
    );
  }

  app.get(
    '/v1/checks',
    { schema: { querystring: Type.Object({}, { additionalProperties: false }) } },
    async (request) => (await checks.list(request.accountId)).map(presentCheck),
  );

  app.get('/v1/checks/:id', { schema: { params: IdParams } }, async (request) => {
    const { id } = request.params as { id: string };
    return presentCheck(await checks.get(request.accountId, id));
  });

  app.put(
    '/v1/checks/:id',
    { schema: { params: IdParams, body: UpdateCheckBody, querystring: AutoAssignAlertsQuery } },
    async (request) => {
      const { id } = request.params as { id: string };
      const now = new Date();
      const before = await checks.get(request.accountId, id);
      const doc = mergeCheckUpdate(before, request.body as Record<string, unknown>, now);
      await checks.update(request.accountId, before, doc, now.getTime());
      return presentCheck(doc);
    },
  );

  app.delete('/v1/checks/:id', { schema: { params: IdParams } }, async (request, reply) => {
    const { id } = request.params as { id: string };
    if (!(await checks.delete(request.accountId, id))) throw notFound('check', id);
    return reply.code(204).send();
  });
}
