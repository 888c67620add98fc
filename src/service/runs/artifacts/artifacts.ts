import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { HttpError } from '../../platform/http/errors.js';

/**
 * An artifact's name: 1–128 of `A-Z a-z 0-9 . _ -`, not `.` or `..`, so it is one plain file
 * name on every file system (no separators, no traversal).
 */
export const ARTIFACT_NAME_PATTERN = '^(?!\\.{1,2}$)[A-Za-z0-9._-]{1,128}$';

/** Path segments the store builds paths from: account and job ids (UUIDs or `[A-Za-z0-9_-]` ids). */
const SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;
const NAME = new RegExp(ARTIFACT_NAME_PATTERN);

/** What an upload stored. */
export type StoredArtifact = { name: string; sizeBytes: number; sha256: string };

/**
 * Where the service keeps the artifacts agents upload: files on the replica's disk ({@link ArtifactStore}) or
 * rows of the store that every replica shares (DatabaseArtifactStore, database-store.ts;
 * `OUTPOST_ARTIFACT_STORE`). Names are checked against {@link ARTIFACT_NAME_PATTERN} and ids against
 * `[A-Za-z0-9_-]{1,64}` by both.
 */
export interface Artifacts {
  /**
   * Streams `body` into the artifact `name` of the job, replacing one of that name whole once complete.
   * @throws HttpError 413 OUTPOST_ERR_ARTIFACT_TOO_LARGE past `declaredBytes`; 400
   *   OUTPOST_ERR_ARTIFACT_INCOMPLETE when the body ends short or breaks off (nothing kept in either case).
   */
  write(
    accountId: string,
    jobId: string,
    name: string,
    body: Readable,
    declaredBytes: number,
  ): Promise<StoredArtifact>;
  /** Deletes every artifact of a job; nothing when there is none. */
  removeJob(accountId: string, jobId: string): Promise<void>;
  /** Opens an artifact for reading (a stream, and its size in bytes); null when there is none of that name. */
  open(
    accountId: string,
    jobId: string,
    name: string,
  ): Promise<{ stream: Readable; sizeBytes: number } | null>;
}

/** Whether `accountId`, `jobId` and `name` are safe as path segments and keys (see {@link Artifacts}). */
export function validArtifactKey(accountId: string, jobId: string, name?: string): boolean {
  return SEGMENT.test(accountId) && SEGMENT.test(jobId) && (name === undefined || NAME.test(name));
}

/**
 * Artifacts of runs (docs/protocol.md: traces, screenshots, … uploaded by the agent), one file
 * each at `<dir>/<accountId>/<jobId>/<name>`. Uploads are streamed to a temporary file under
 * `<dir>/.partial/` and renamed into place once complete, so a reader never sees half a file
 * and a repeated upload of the same name replaces the previous one whole.
 * A "store" of files on disk, not SQL: hence not an `*Queries` class (see docs/architecture.md, "Modules").
 */
export class ArtifactStore implements Artifacts {
  #dir: string | undefined;

  /** @param dir root folder, created on the first upload; default a new folder under the OS temp dir. */
  constructor(dir?: string) {
    this.#dir = dir;
  }

  /** Root folder; without one given, a new temp folder made on first use (and left in place). */
  get dir(): string {
    this.#dir ??= mkdtempSync(join(tmpdir(), 'outpost-artifacts-'));
    return this.#dir;
  }

  /**
   * Path of an artifact.
   * @throws Error when a segment could leave its folder (a bug: routes validate names first).
   */
  pathOf(accountId: string, jobId: string, name: string): string {
    if (!SEGMENT.test(accountId) || !SEGMENT.test(jobId) || !NAME.test(name)) {
      throw new Error(`artifact path segment refused: ${JSON.stringify([accountId, jobId, name])}`);
    }
    return join(this.dir, accountId, jobId, name);
  }

  /**
   * Streams `body` into the artifact, hashing and counting bytes as they pass (never buffering
   * the whole body). The body must be exactly `declaredBytes` long.
   * @throws HttpError 413 (`OUTPOST_ERR_ARTIFACT_TOO_LARGE`) as soon as more than
   *   `declaredBytes` arrive; 400 (`OUTPOST_ERR_ARTIFACT_INCOMPLETE`) when the body ends
   *   short or the upload breaks off. Nothing is kept in either case.
   */
  async write(
    accountId: string,
    jobId: string,
    name: string,
    body: Readable,
    declaredBytes: number,
  ): Promise<StoredArtifact> {
    const path = this.pathOf(accountId, jobId, name);
    const partial = join(this.dir, '.partial', randomUUID());
    await mkdir(dirname(partial), { recursive: true });
    try {
      const stored = await receiveArtifact(
        name,
        body,
        declaredBytes,
        createWriteStream(partial, { flags: 'wx' }),
      );
      await mkdir(dirname(path), { recursive: true });
      await rename(partial, path);
      return stored;
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  }

  /**
   * Deletes every artifact file of a job (its folder); nothing when there is none.
   * @throws Error when a segment could leave its folder (a bug).
   */
  async removeJob(accountId: string, jobId: string): Promise<void> {
    if (!SEGMENT.test(accountId) || !SEGMENT.test(jobId)) {
      throw new Error(`artifact path segment refused: ${JSON.stringify([accountId, jobId])}`);
    }
    await rm(join(this.dir, accountId, jobId), { recursive: true, force: true });
  }

  /** Opens an artifact for reading; null when there is none of that name. */
  async open(
    accountId: string,
    jobId: string,
    name: string,
  ): Promise<{ stream: Readable; sizeBytes: number } | null> {
    const path = this.pathOf(accountId, jobId, name);
    try {
      const info = await stat(path);
      if (!info.isFile()) return null;
      return { stream: createReadStream(path), sizeBytes: info.size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }
}

/**
 * Streams an upload's `body` into `sink` (a file, or the store's chunks), hashing and counting bytes as they
 * pass, never buffering the whole body; resolves once `sink` has finished. The caller keeps or drops what
 * `sink` wrote.
 * @throws HttpError 413 (`OUTPOST_ERR_ARTIFACT_TOO_LARGE`) as soon as more than `declaredBytes` arrive;
 *   400 (`OUTPOST_ERR_ARTIFACT_INCOMPLETE`) when the body ends short, the upload breaks off or `sink` fails.
 */
export async function receiveArtifact(
  name: string,
  body: Readable,
  declaredBytes: number,
  sink: Writable,
): Promise<StoredArtifact> {
  const hash = createHash('sha256');
  let sizeBytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      sizeBytes += chunk.length;
      if (sizeBytes > declaredBytes) {
        callback(
          new HttpError(
            'OUTPOST_ERR_ARTIFACT_TOO_LARGE',
            `artifact ${name} is longer than its content-length ${declaredBytes}`,
            {
              contentLength: declaredBytes,
            },
          ),
        );
        return;
      }
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  // `body` is piped, not handed to pipeline: on an overflow the body is left unread (the
  // answer closes the connection) instead of destroyed, which would take the socket and the 413 with it.
  const onClose = () => {
    if (!body.readableEnded) meter.destroy(new Error('the upload broke off'));
  };
  body.once('close', onClose);
  body.once('error', onClose);
  const written = pipeline(meter, sink);
  body.pipe(meter);
  try {
    await written;
    if (sizeBytes !== declaredBytes) {
      throw new HttpError(
        'OUTPOST_ERR_ARTIFACT_INCOMPLETE',
        `artifact ${name} ended after ${sizeBytes} of ${declaredBytes} bytes`,
        {
          contentLength: declaredBytes,
          receivedBytes: sizeBytes,
        },
      );
    }
  } catch (err) {
    body.unpipe(meter);
    if (err instanceof HttpError) throw err;
    // The client went away mid-body (ECONNRESET, "aborted"): nobody reads this answer.
    throw new HttpError(
      'OUTPOST_ERR_ARTIFACT_INCOMPLETE',
      `upload of artifact ${name} broke off after ${sizeBytes} bytes`,
      {
        contentLength: declaredBytes,
        receivedBytes: sizeBytes,
      },
    );
  } finally {
    body.off('close', onClose);
    body.off('error', onClose);
  }
  return { name, sizeBytes, sha256: hash.digest('hex') };
}
