import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../context.js';
import { HttpError } from '../platform/http/errors.js';
import { ErrorBodySchema } from '../platform/http/schema-helpers.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { queryAjv } from '../platform/http/validation.js';

/** The largest code bundle `POST /next/checkly-storage/upload-code-bundle` reads, bytes (25 MiB). */
export const MAX_CODE_BUNDLE_BYTES = 25 * 1024 * 1024;
const OCTET_STREAM = 'application/octet-stream';

/** Reads `stream` to its end, hashing it. @throws HttpError 413 past {@link MAX_CODE_BUNDLE_BYTES}. */
async function digestOf(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_CODE_BUNDLE_BYTES) {
      stream.destroy();
      throw new HttpError(
        'OUTPOST_ERR_PAYLOAD_TOO_LARGE',
        `the code bundle is over ${MAX_CODE_BUNDLE_BYTES} bytes`,
      );
    }
    hash.update(chunk);
  }
  return hash.digest('hex');
}

/**
 * The Checkly CLI's code-bundle upload (docs/api.md, "Projects (monitoring as code)"): `checkly deploy` sends
 * its project's archive (for Playwright check suites) before every deploy and stops if the upload fails.
 * Outpost reads it to its end (at most 25 MiB, else 413) and answers a key naming its SHA-256; it keeps
 * nothing, since the checks it deploys carry their code in the deploy itself.
 */
export async function storageRoutes(app: ServiceApp, _ctx: ServiceContext): Promise<void> {
  await app.register(async (scope: ServiceApp) => {
    scope.addContentTypeParser(OCTET_STREAM, (_request, payload, done) => done(null, payload));
    scope.post(
      '/next/checkly-storage/upload-code-bundle',
      {
        config: { permission: 'write' },
        schema: {
          tags: ['projects'],
          summary: "Upload a project's code bundle (read and dropped)",
          body: Type.Unsafe<Readable>({ type: 'string', format: 'binary' }),
          response: { 200: Type.Object({ key: Type.String() }), 413: ErrorBodySchema, 415: ErrorBodySchema },
        },
        validatorCompiler: ({ schema, httpPart }) =>
          httpPart === 'body' ? () => true : queryAjv.compile(schema),
      },
      async (request) => {
        // Only an octet stream is read as one; any other type arrives parsed (JSON) or refused.
        if (!(request.body instanceof Readable)) {
          throw new HttpError(
            'OUTPOST_ERR_UNSUPPORTED_MEDIA_TYPE',
            `send the code bundle as ${OCTET_STREAM}`,
          );
        }
        return { key: `outpost-code-bundle/${await digestOf(request.body)}` };
      },
    );
  });
}
