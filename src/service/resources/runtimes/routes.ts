import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import type { ServiceContext } from '../../context.js';
import { notFound } from '../../platform/http/errors.js';
import { loadRuntimes } from './runtimes.js';
import { RuntimeParams, RuntimeSchema } from './schema.js';

const tags = ['runtimes'];

/**
 * Runtimes (docs/api.md, "Runtimes"): read once from `runtimes/<name>/runtime.json`
 * when the routes are registered, so a broken file stops the service at start.
 * Global, not per account, but behind the API key like every /v1 route.
 * @throws OutpostError OUTPOST_ERR_CONFIG naming the broken file.
 */
export async function runtimeRoutes(app: ServiceApp, _ctx: ServiceContext): Promise<void> {
  const runtimes = loadRuntimes();
  const byName = new Map(runtimes.map((r) => [r.name as string, r]));

  app.get(
    '/v1/runtimes',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List runtimes',
        description: 'Newest first.',
        response: { 200: Type.Array(RuntimeSchema) },
      },
    },
    async () => runtimes,
  );

  app.get(
    '/v1/runtimes/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Get a runtime',
        params: RuntimeParams,
        response: { 200: RuntimeSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      const runtime = byName.get(id);
      if (!runtime) throw notFound('runtime', id);
      return runtime;
    },
  );
}
