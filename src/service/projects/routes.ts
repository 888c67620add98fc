import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { HttpError, notFound } from '../platform/http/errors.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { type Api, applyDeploy, deleteAll, planDeploy, previewOf } from './deploy.js';
import { decodedBody } from './gzip-body.js';
import {
  DeleteProjectQuery,
  DeployAnswerSchema,
  DeployBodySchema,
  DeployQuery,
  ProjectBodySchema,
  ProjectParams,
  ProjectSchema,
} from './schema.js';
import { type ProjectRow, ProjectQueries } from './store.js';

const tags = ['projects'];
/** The largest deploy body, decompressed, bytes (20 MiB). */
export const MAX_DEPLOY_BODY_BYTES = 20 * 1024 * 1024;
/** Headers of the deploying request that carry its credentials to the service's own routes. */
const CREDENTIAL_HEADERS = [
  'authorization',
  'cookie',
  'x-csrf-token',
  'origin',
  'x-service-account',
] as const;

/** A project as the routes answer it. */
function projectView(row: ProjectRow) {
  return {
    id: row.id,
    logicalId: row.logical_id,
    name: row.name,
    repoUrl: row.repo_url,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: row.updated_at === null ? null : new Date(row.updated_at).toISOString(),
  };
}

/**
 * The service's own API for the request's account: each call goes through `app.inject` with the request's
 * credentials, so it is validated, authorized and has its side effects exactly as a client's call would.
 */
function apiOf(app: ServiceApp, request: FastifyRequest): Api {
  const headers: Record<string, string> = {};
  for (const name of CREDENTIAL_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return async ({ method, url, body }) => {
    const answer = await app.inject({
      method,
      url,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    const text = answer.body;
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = { message: text.slice(0, 500) };
    }
    return { statusCode: answer.statusCode, body: parsed };
  };
}

/**
 * Monitoring-as-code projects (docs/api.md, "Projects (monitoring as code)"): the routes `checkly deploy` and
 * `checkly destroy` call. A deploy applies the project's constructs through the service's own routes and
 * keeps the project's map of logical ids to the API's ids, so the next deploy updates what it made.
 */
export async function projectRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const projects = new ProjectQueries(ctx.db);
  // Deploys and deletes of one account run one at a time, so two never plan over the same map.
  const queues = new Map<string, Promise<unknown>>();
  const oneAtATime = <T>(accountId: string, work: () => Promise<T>): Promise<T> => {
    const previous = queues.get(accountId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    queues.set(accountId, settled);
    void settled.then(() => {
      if (queues.get(accountId) === settled) queues.delete(accountId);
    });
    return next;
  };

  app.get(
    '/next/projects',
    {
      config: { permission: 'read' },
      schema: { tags, summary: 'List projects', response: { 200: Type.Array(ProjectSchema) } },
    },
    async (request) => (await projects.list(request.accountId)).map(projectView),
  );

  app.get(
    '/next/projects/:logicalId',
    {
      config: { permission: 'read' },
      schema: { tags, summary: 'Get a project', params: ProjectParams, response: { 200: ProjectSchema } },
    },
    async (request) => {
      const row = await projects.find(request.accountId, request.params.logicalId);
      if (!row) throw notFound('project', request.params.logicalId);
      return projectView(row);
    },
  );

  app.post(
    '/next/projects',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Create a project',
        description: 'An empty project; 409 when the account has one with this logical id.',
        body: ProjectBodySchema,
        response: { 201: ProjectSchema },
      },
    },
    async (request, reply) => {
      const { logicalId, name, repoUrl } = request.body;
      if (await projects.find(request.accountId, logicalId)) {
        throw new HttpError('OUTPOST_ERR_PROJECT_EXISTS', `project ${logicalId} already exists`, {
          field: 'logicalId',
        });
      }
      const row: ProjectRow = {
        id: randomUUID(),
        account_id: request.accountId,
        logical_id: logicalId,
        name,
        repo_url: repoUrl ?? null,
        created_at: Date.now(),
        updated_at: null,
      };
      await projects.insert(row);
      return reply.code(201).send(projectView(row));
    },
  );

  app.delete(
    '/next/projects/:logicalId',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Delete a project',
        description:
          'Deletes every resource the project made (checks, groups, alert channels, pages, …) and then the project; with `preserveResources=true` the resources stay and only the project goes.',
        params: ProjectParams,
        querystring: DeleteProjectQuery,
      },
    },
    async (request, reply) =>
      oneAtATime(request.accountId, async () => {
        const row = await projects.find(request.accountId, request.params.logicalId);
        if (!row) throw notFound('project', request.params.logicalId);
        if (!request.query.preserveResources) {
          await deleteAll(await projects.resources(row.id), apiOf(app, request));
        }
        await projects.delete(row.id);
        return reply.code(204).send();
      }),
  );

  app.post(
    '/next-v2/projects/deploy',
    {
      config: { permission: 'write' },
      bodyLimit: MAX_DEPLOY_BODY_BYTES,
      // `checkly deploy` sends its body gzip-compressed (content-encoding: gzip).
      preParsing: async (request, _reply, payload) =>
        decodedBody(request.headers['content-encoding'], payload),
      schema: {
        tags,
        summary: 'Deploy a project',
        description:
          'Creates, updates and deletes the resources of a monitoring-as-code project so the account holds exactly its constructs; `dryRun=true` only answers the changes. All or nothing.',
        querystring: DeployQuery,
        body: DeployBodySchema,
        response: { 200: DeployAnswerSchema },
      },
    },
    async (request) =>
      oneAtATime(request.accountId, async () => {
        const { project: body, resources } = request.body;
        const existing = await projects.find(request.accountId, body.logicalId);
        const current = existing ? await projects.resources(existing.id) : [];
        const plan = planDeploy(resources, current);
        const now = Date.now();
        const row: ProjectRow = existing
          ? { ...existing, name: body.name, repo_url: body.repoUrl ?? null, updated_at: now }
          : {
              id: randomUUID(),
              account_id: request.accountId,
              logical_id: body.logicalId,
              name: body.name,
              repo_url: body.repoUrl ?? null,
              created_at: now,
              updated_at: null,
            };
        if (request.query.dryRun) return { project: projectView(row), diff: previewOf(plan) };
        const { diff, map } = await applyDeploy(plan, resources, apiOf(app, request), (err) =>
          request.log.error({ err }, 'could not undo a change of a failed deploy'),
        );
        if (existing) await projects.update(row.id, row.name, row.repo_url, now);
        else await projects.insert(row);
        await projects.replaceResources(row.id, map, now);
        return { project: projectView(row), diff };
      }),
  );
}
