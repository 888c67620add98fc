import { Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { HttpError } from '../platform/http/errors.js';

/** The most a compressed deploy body may grow: decompressed bytes per compressed byte. */
export const MAX_GZIP_RATIO = 100;
/** Decompressed bytes allowed whatever the ratio (a small body compresses badly or very well). */
const RATIO_SLACK_BYTES = 1024 * 1024;

/** A body stream with the count of bytes received on the wire, which fastify checks against `content-length`. */
type CountedStream = Transform & { receivedEncodedLength?: number | undefined };

/**
 * The body of a request as fastify's `preParsing` hook should read it (docs/api.md, "Projects (monitoring as
 * code)"): as sent without `content-encoding` (or `identity`), decompressed for `gzip`. A decompressed body
 * stops with 413 OUTPOST_ERR_PAYLOAD_TOO_LARGE once it is more than {@link MAX_GZIP_RATIO} times what was
 * received plus 1 MiB (a zip bomb); the route's `bodyLimit` bounds its total size (413 as well).
 * @throws HttpError 415 for any other encoding.
 */
export function decodedBody(encoding: string | undefined, payload: Readable): Readable {
  const name = (encoding ?? 'identity').trim().toLowerCase();
  if (name === 'identity' || name === '') return payload;
  if (name !== 'gzip') {
    throw new HttpError(
      'OUTPOST_ERR_UNSUPPORTED_MEDIA_TYPE',
      `content-encoding ${name} is not supported; send gzip or no encoding`,
    );
  }
  let received = 0;
  let produced = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      done(null, chunk);
    },
  });
  const out: CountedStream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      produced += chunk.length;
      out.receivedEncodedLength = received;
      if (produced > received * MAX_GZIP_RATIO + RATIO_SLACK_BYTES) {
        done(
          new HttpError(
            'OUTPOST_ERR_PAYLOAD_TOO_LARGE',
            `the gzip body expands more than ${MAX_GZIP_RATIO} times; send it uncompressed or smaller`,
          ),
        );
        return;
      }
      done(null, chunk);
    },
    flush(done) {
      out.receivedEncodedLength = received;
      done();
    },
  });
  const gunzip = createGunzip();
  const fail = (err: Error) => {
    const answer =
      err instanceof HttpError
        ? err
        : new HttpError('OUTPOST_ERR_MALFORMED_REQUEST', `the gzip body does not decompress: ${err.message}`);
    out.destroy(answer);
  };
  payload.on('error', fail);
  counter.on('error', fail);
  gunzip.on('error', fail);
  payload.pipe(counter).pipe(gunzip).pipe(out);
  return out;
}
