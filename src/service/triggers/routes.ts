import type { ServiceContext } from '../context.js';
import { NoContent } from '../platform/http/schema-helpers.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { CheckIdParams, CheckTriggerSchema, GroupIdParams, GroupTriggerSchema } from './schema.js';
import { Triggers } from './triggers.js';

const tags = ['triggers'];

/**
 * The triggers of checks and check groups (docs/api.md, "Triggers"): `POST` makes the target's trigger
 * (201; 200 with the one it has), `GET` reads it, `DELETE` removes it (204). No body.
 */
export async function triggerRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const triggers = new Triggers(ctx);

  app.post(
    '/v1/triggers/checks/:checkId',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: "Create the check's trigger",
        params: CheckIdParams,
        response: { 200: CheckTriggerSchema, 201: CheckTriggerSchema },
      },
    },
    async (request, reply) => {
      const { checkId } = request.params;
      const { view, created } = await triggers.create(request.accountId, 'CHECK', checkId, Date.now());
      return reply.code(created ? 201 : 200).send({ ...view, checkId });
    },
  );

  app.get(
    '/v1/triggers/checks/:checkId',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: "Get the check's trigger",
        params: CheckIdParams,
        response: { 200: CheckTriggerSchema },
      },
    },
    async (request) => {
      const { checkId } = request.params;
      return { ...(await triggers.get(request.accountId, 'CHECK', checkId)), checkId };
    },
  );

  app.delete(
    '/v1/triggers/checks/:checkId',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: "Delete the check's trigger",
        params: CheckIdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await triggers.delete(request.accountId, 'CHECK', request.params.checkId);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/triggers/check-groups/:groupId',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: "Create the check group's trigger",
        params: GroupIdParams,
        response: { 200: GroupTriggerSchema, 201: GroupTriggerSchema },
      },
    },
    async (request, reply) => {
      const { groupId } = request.params;
      const { view, created } = await triggers.create(
        request.accountId,
        'GROUP',
        String(groupId),
        Date.now(),
      );
      return reply.code(created ? 201 : 200).send({ ...view, groupId });
    },
  );

  app.get(
    '/v1/triggers/check-groups/:groupId',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: "Get the check group's trigger",
        params: GroupIdParams,
        response: { 200: GroupTriggerSchema },
      },
    },
    async (request) => {
      const { groupId } = request.params;
      return { ...(await triggers.get(request.accountId, 'GROUP', String(groupId))), groupId };
    },
  );

  app.delete(
    '/v1/triggers/check-groups/:groupId',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: "Delete the check group's trigger",
        params: GroupIdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await triggers.delete(request.accountId, 'GROUP', String(request.params.groupId));
      return reply.code(204).send();
    },
  );
}
