import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';

/** Smallest JSON answer compressed, bytes: below it the headers and the work cost more than they save. */
export const COMPRESS_THRESHOLD_BYTES = 1024;

/** The encodings answers are compressed with, preferred first at equal weight. */
export const COMPRESSED_ENCODINGS = ['br', 'gzip'] as const;

/** One of {@link COMPRESSED_ENCODINGS}. */
export type CompressedEncoding = (typeof COMPRESSED_ENCODINGS)[number];

/**
 * The answers compressed: JSON (`application/json`, and `application/<x>+json` such as problem+json), nothing
 * else. Pages, the web app's files and artifacts keep their own encoding: status pages gzip their cached
 * renderings themselves, the web app's assets are served as built, and artifact downloads, long polls that
 * hijack their reply and streamed bodies are not JSON.
 */
const COMPRESSED_TYPES = /^application\/(?:[\w.+-]+\+)?json(?:\s*;|$)/i;

/**
 * Compressed JSON answers (`@fastify/compress`), registered once on the root app before any route: an answer
 * of a {@link COMPRESSED_TYPES} type of at least {@link COMPRESS_THRESHOLD_BYTES} is sent with brotli or gzip
 * when the request's `accept-encoding` takes one (brotli first at equal weight; `content-encoding` and
 * `vary: accept-encoding` set); a request asking none, or only `identity`, is answered as before. An answer
 * that already has a `content-encoding` (a status page's gzipped rendering) is left as it is. Request bodies
 * are not decompressed here: the routes that take compressed bodies decode them themselves (projects'
 * gzip-body.ts).
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    threshold: COMPRESS_THRESHOLD_BYTES,
    customTypes: COMPRESSED_TYPES,
    encodings: [...COMPRESSED_ENCODINGS],
  });
}
