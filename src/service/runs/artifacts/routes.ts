import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceApp } from '../../platform/http/service-app.js';
import { MAX_ARTIFACT_SIZE_BYTES } from '../../../protocol/index.js';
import { queryAjv } from '../../platform/http/validation.js';
import { ARTIFACT_NAME_PATTERN } from './artifacts.js';
import type { ServiceContext } from '../../context.js';
import { notFound, sendError } from '../../platform/http/errors.js';
import type { ServiceErrorCode } from '../../platform/http/error-codes.js';
import { ErrorBodySchema, strict, ResourceId } from '../../platform/http/schema-helpers.js';
import { agentScopeOf } from '../queue/agent-routes.js';
import { ResultQueries } from '../../resources/index.js';

const OCTET_STREAM = 'application/octet-stream';
const binary = { content: { [OCTET_STREAM]: { schema: { type: 'string', format: 'binary' } } } };
const name = Type.String({ minLength: 1, maxLength: 128, pattern: ARTIFACT_NAME_PATTERN });

const UploadParams = Type.Object({ jobId: ResourceId, name }, strict);
const DownloadParams = Type.Object(
  {
    checkId: ResourceId,
    checkResultId: ResourceId,
    name,
  },
  strict,
);

/** Answer of an upload: what was stored, with its SHA-256 (hex) for the agent to compare. */
const StoredArtifactSchema = Type.Object({
  name: Type.String(),
  sizeBytes: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
});

/**
 * Refuses an upload on its headers alone, before a byte of the body is read (docs/protocol.md):
 * 415 unless `application/octet-stream`, 411 without `content-length` (a chunked body has
 * none), 413 above 150 MB. The answer closes the connection, so the unread body is never
 * drained.
 */
async function refuseOnHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply | undefined> {
  const refuse = (code: ServiceErrorCode, message: string, attributes: Record<string, unknown>) => {
    reply.header('connection', 'close');
    return sendError(reply, code, message, attributes);
  };
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== OCTET_STREAM) {
    return refuse(
      'OUTPOST_ERR_UNSUPPORTED_MEDIA_TYPE',
      `an artifact is sent as ${OCTET_STREAM}, not ${type || 'no content-type'}`,
      {
        field: 'content-type',
        in: 'headers',
      },
    );
  }
  const length = request.headers['content-length'];
  if (length === undefined) {
    return refuse(
      'OUTPOST_ERR_LENGTH_REQUIRED',
      'header content-length is required: artifacts are not sent chunked',
      {
        field: 'content-length',
        in: 'headers',
      },
    );
  }
  if (!/^\d{1,16}$/.test(length)) {
    return refuse('OUTPOST_ERR_VALIDATION', 'header content-length must be a number of bytes', {
      field: 'content-length',
      in: 'headers',
      rule: 'type',
    });
  }
  if (Number(length) > MAX_ARTIFACT_SIZE_BYTES) {
    return refuse(
      'OUTPOST_ERR_ARTIFACT_TOO_LARGE',
      `artifact of ${length} bytes is over the limit of ${MAX_ARTIFACT_SIZE_BYTES} bytes (150 MB)`,
      {
        field: 'content-length',
        in: 'headers',
        limitBytes: MAX_ARTIFACT_SIZE_BYTES,
        contentLength: Number(length),
      },
    );
  }
  return undefined;
}

/**
 * Artifacts: the agent's streamed upload (`PUT /v1/agent/jobs/{jobId}/artifacts/{name}`,
 * docs/protocol.md, docs/protocol.md) and the user's download of a result's artifact
 * (`GET /v1/check-results/{checkId}/{checkResultId}/artifacts/{name}`, not in the spec).
 */
export async function artifactRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  // Its own scope, so only this route takes octet-stream bodies; they reach the handler as the
  // request stream itself (never buffered) and are piped to a file there.
  await app.register(async (scope: ServiceApp) => {
    scope.addContentTypeParser(OCTET_STREAM, (_request, payload, done) => done(null, payload));
    scope.put(
      '/v1/agent/jobs/:jobId/artifacts/:name',
      {
        config: { permission: 'agent' },
        schema: {
          summary: 'Upload an artifact of a job (streamed; content-length at most 157 286 400 bytes)',
          params: UploadParams,
          headers: Type.Object({
            'content-length': Type.Integer({ minimum: 0, maximum: MAX_ARTIFACT_SIZE_BYTES }),
          }),
          // The content-type parser below hands the request stream itself to the handler.
          body: Type.Unsafe<Readable>({ ...binary, required: true }),
          response: {
            201: StoredArtifactSchema,
            409: ErrorBodySchema,
            411: ErrorBodySchema,
            413: ErrorBodySchema,
            415: ErrorBodySchema,
          },
        },
        // The body is a stream, read by the handler: nothing to validate up front.
        validatorCompiler: ({ schema, httpPart }) =>
          httpPart === 'body' ? () => true : queryAjv.compile(schema),
        onRequest: refuseOnHeaders,
        onSend: async (request, reply, payload) => {
          // An error answered before the body was read: close rather than drain up to 150 MB.
          if (reply.statusCode >= 400 && !request.raw.complete) reply.header('connection', 'close');
          return payload;
        },
      },
      async (request, reply) => {
        const { jobId, name } = request.params;
        const agent = await agentScopeOf(ctx, request);
        await ctx.queue.assertHeldBy(agent, jobId);
        const stored = await ctx.artifacts.write(
          agent.accountId,
          jobId,
          name,
          request.body,
          Number(request.headers['content-length']),
        );
        request.log.debug({ jobId, name, sizeBytes: stored.sizeBytes }, 'artifact stored');
        return reply.code(201).send(stored);
      },
    );
  });

  app.get(
    '/v1/check-results/:checkId/:checkResultId/artifacts/:name',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['check results'],
        summary: 'Download an artifact of a check result',
        description:
          'The bytes the agent uploaded, as application/octet-stream. Result ids and their `artifacts` are in check sessions.',
        params: DownloadParams,
        response: { 200: { description: 'The artifact', ...binary } },
      },
    },
    async (request, reply) => {
      const { checkId, checkResultId, name } = request.params;
      const jobId = await new ResultQueries(ctx.db).jobIdOf(request.accountId, checkId, checkResultId);
      if (jobId === undefined) throw notFound('check result', checkResultId);
      const file = await ctx.artifacts.open(request.accountId, jobId, name);
      if (!file) throw notFound('artifact', name);
      return reply
        .type(OCTET_STREAM)
        .header('content-length', file.sizeBytes)
        .header('content-disposition', `attachment; filename="${name}"`)
        .send(file.stream);
    },
  );
}
