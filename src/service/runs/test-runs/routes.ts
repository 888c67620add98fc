import { Type } from '@sinclair/typebox';
import { CHECK_TYPE_REGISTRY, RUNNABLE_CHECK_TYPES } from '../../checks/index.js';
import type { ServiceContext } from '../../context.js';
import { badField } from '../../platform/http/errors.js';
import { CheckSessionSchema } from '../../platform/http/responses.js';
import { ErrorBodySchema, ResourceId, strict } from '../../platform/http/schema-helpers.js';
import type { ServiceApp } from '../../platform/http/service-app.js';
import { loadRuntimes } from '../../resources/index.js';
import { startTestRun } from './test-runs.js';

const TestRunQuery = Type.Object(
  {
    checkId: Type.Optional(
      Type.String({
        ...ResourceId,
        description:
          'The saved check the body was edited from: secrets sent back as ***** run with its values.',
      }),
    ),
  },
  strict,
);

/**
 * Test runs ("Run before saving", docs/api.md, "Check sessions"): `POST /v1/check-sessions/test/{path}` for
 * each type an agent runs, taking the body `POST /v1/checks/{path}` takes, answering 201 with a check session
 * (follow it with `GET /v1/check-sessions/{id}/completion`). Other types (heartbeats) answer 400 naming `type`.
 * @throws OutpostError OUTPOST_ERR_CONFIG when a runtime.json is invalid (see loadRuntimes).
 */
export async function testRunRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const multiStepRuntimes: ReadonlySet<string> = new Set(
    loadRuntimes()
      .filter((r) => r.multiStepSupport)
      .map((r) => r.name as string),
  );
  for (const { checkType, path, createBody, bodyLimitBytes } of CHECK_TYPE_REGISTRY) {
    if (!RUNNABLE_CHECK_TYPES.has(checkType)) continue;
    app.post(
      `/v1/check-sessions/test/${path}`,
      {
        config: { permission: 'write' },
        ...(bodyLimitBytes === null ? {} : { bodyLimit: bodyLimitBytes }),
        schema: {
          tags: ['check sessions'],
          summary: `Run a ${checkType} check once without saving it (a test run; nothing is recorded)`,
          description:
            'Takes the body of the create route of the type. Runs in the first of its locations a connected agent serves; the session and its result are kept for an hour.',
          body: createBody,
          querystring: TestRunQuery,
          response: { 201: CheckSessionSchema, 400: ErrorBodySchema },
        },
      },
      async (request, reply) => {
        const session = await startTestRun(ctx, {
          accountId: request.accountId,
          checkType,
          body: request.body as Record<string, unknown>,
          fromCheckId: request.query.checkId,
          multiStepRuntimes,
        });
        return reply.code(201).send(session);
      },
    );
  }
  const runnable = CHECK_TYPE_REGISTRY.filter((e) => RUNNABLE_CHECK_TYPES.has(e.checkType)).map(
    (e) => e.path,
  );
  app.post(
    '/v1/check-sessions/test/:type',
    {
      config: { permission: 'write' },
      // Not an operation of its own in /openapi.json: it only refuses, and the types it runs are listed above.
      schema: {
        hide: true,
        params: Type.Object({ type: Type.String({ maxLength: 64 }) }, strict),
        response: { 400: ErrorBodySchema },
      },
    },
    async (request) => {
      throw badField(
        'type',
        `cannot be test-run: ${request.params.type} is not a type an agent runs (${runnable.join(', ')})`,
        'enum',
        'params',
      );
    },
  );
}
