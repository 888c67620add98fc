import { randomUUID } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import { isPostgres } from '../../platform/store/dialect.js';
import { type Artifacts, receiveArtifact, type StoredArtifact, validArtifactKey } from './artifacts.js';

/** Bytes per `artifact_chunks` row: 1 MiB (a 150 MB trace is 150 rows, each one statement). */
export const ARTIFACT_CHUNK_BYTES = 1_048_576;

/** Age past which chunks of an upload that never completed are deleted by retention, ms: an hour. */
export const ORPHAN_CHUNK_AGE_MS = 3_600_000;

/**
 * Artifacts kept in the store every replica shares (`artifacts` and `artifact_chunks`, migration
 * 0026_artifact_store), so an artifact uploaded through one replica downloads through any other without a
 * shared disk: the default on PostgreSQL (`OUTPOST_ARTIFACT_STORE=database`).
 *
 * An upload streams into chunks of {@link ARTIFACT_CHUNK_BYTES} under a new upload id, one INSERT per chunk
 * as the bytes arrive (never the whole body in memory, no transaction held open across the upload); once it
 * is complete one transaction points the artifact's row at it and deletes the chunks it replaces. A broken
 * upload deletes its chunks; chunks a crash left behind go with {@link DatabaseArtifactStore.pruneOrphans}.
 * A download reads one chunk per query as the client takes them.
 */
export class DatabaseArtifactStore implements Artifacts {
  readonly #db: Kysely<Database>;
  readonly #now: () => number;

  /** `now`: the clock (epoch ms) chunk and artifact rows are stamped with. */
  constructor(db: Kysely<Database>, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  async write(
    accountId: string,
    jobId: string,
    name: string,
    body: Readable,
    declaredBytes: number,
  ): Promise<StoredArtifact> {
    assertKey(accountId, jobId, name);
    const uploadId = randomUUID();
    const db = this.#db;
    const now = this.#now;
    let seq = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      if (pendingBytes === 0) return;
      const data = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      await db
        .insertInto('artifact_chunks')
        .values({ upload_id: uploadId, seq: seq++, data, created_at: now() })
        .execute();
    };
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        let rest = chunk;
        const steps: Promise<void>[] = [];
        while (rest.length > 0) {
          const take = Math.min(rest.length, ARTIFACT_CHUNK_BYTES - pendingBytes);
          pending.push(rest.subarray(0, take));
          pendingBytes += take;
          rest = rest.subarray(take);
          if (pendingBytes === ARTIFACT_CHUNK_BYTES) steps.push(flush());
        }
        // The chunks of one write go in order: flush() takes the buffers synchronously and numbers them.
        Promise.all(steps).then(() => callback(), callback);
      },
      final(callback) {
        flush().then(() => callback(), callback);
      },
    });
    let stored: StoredArtifact;
    try {
      stored = await receiveArtifact(name, body, declaredBytes, sink);
      await db.transaction().execute(async (tx) => {
        const before = await tx
          .selectFrom('artifacts')
          .select('upload_id')
          .where('account_id', '=', accountId)
          .where('job_id', '=', jobId)
          .where('name', '=', name)
          // Two uploads of one name at once: the second waits here for the first's commit (PostgreSQL; SQLite
          // has one writer), then replaces it and deletes its chunks.
          .$if(isPostgres(tx), (q) => q.forUpdate())
          .executeTakeFirst();
        const row = {
          upload_id: uploadId,
          size_bytes: stored.sizeBytes,
          sha256: stored.sha256,
          created_at: now(),
        };
        await tx
          .insertInto('artifacts')
          .values({ account_id: accountId, job_id: jobId, name, ...row })
          .onConflict((oc) => oc.columns(['account_id', 'job_id', 'name']).doUpdateSet(row))
          .execute();
        if (before)
          await tx.deleteFrom('artifact_chunks').where('upload_id', '=', before.upload_id).execute();
      });
    } catch (err) {
      await db.deleteFrom('artifact_chunks').where('upload_id', '=', uploadId).execute();
      throw err;
    }
    return stored;
  }

  async removeJob(accountId: string, jobId: string): Promise<void> {
    if (!validArtifactKey(accountId, jobId)) {
      throw new Error(`artifact key refused: ${JSON.stringify([accountId, jobId])}`);
    }
    await this.#db.transaction().execute(async (tx) => {
      const rows = await tx
        .selectFrom('artifacts')
        .select('upload_id')
        .where('account_id', '=', accountId)
        .where('job_id', '=', jobId)
        .execute();
      if (rows.length === 0) return;
      await tx
        .deleteFrom('artifact_chunks')
        .where(
          'upload_id',
          'in',
          rows.map((r) => r.upload_id),
        )
        .execute();
      await tx
        .deleteFrom('artifacts')
        .where('account_id', '=', accountId)
        .where('job_id', '=', jobId)
        .execute();
    });
  }

  async open(
    accountId: string,
    jobId: string,
    name: string,
  ): Promise<{ stream: Readable; sizeBytes: number } | null> {
    assertKey(accountId, jobId, name);
    const row = await this.#db
      .selectFrom('artifacts')
      .select(['upload_id', 'size_bytes'])
      .where('account_id', '=', accountId)
      .where('job_id', '=', jobId)
      .where('name', '=', name)
      .executeTakeFirst();
    if (!row) return null;
    const db = this.#db;
    const uploadId = row.upload_id;
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let seq = 0; ; seq++) {
        const chunk = await db
          .selectFrom('artifact_chunks')
          .select('data')
          .where('upload_id', '=', uploadId)
          .where('seq', '=', seq)
          .executeTakeFirst();
        // A replacing upload committed meanwhile and deleted these chunks: the stream ends short, and the
        // client sees fewer bytes than the content-length it was given (an incomplete download, not a mix).
        if (!chunk) return;
        yield Buffer.from(chunk.data);
      }
    }
    return { stream: Readable.from(chunks(), { objectMode: false }), sizeBytes: Number(row.size_bytes) };
  }

  /**
   * Deletes the chunks of uploads that never completed (the replica stopped mid-upload) once older than
   * {@link ORPHAN_CHUNK_AGE_MS}: chunks no `artifacts` row points at, at most `limit` per call.
   * @returns how many chunks went.
   */
  async pruneOrphans(nowMs: number, limit: number): Promise<number> {
    const rows = await this.#db
      .selectFrom('artifact_chunks as c')
      .select(['c.upload_id', 'c.seq'])
      .where('c.created_at', '<', nowMs - ORPHAN_CHUNK_AGE_MS)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('artifacts as a').select('a.upload_id').whereRef('a.upload_id', '=', 'c.upload_id'),
          ),
        ),
      )
      .limit(limit)
      .execute();
    let deleted = 0;
    for (const { upload_id, seq } of rows) {
      const res = await this.#db
        .deleteFrom('artifact_chunks')
        .where('upload_id', '=', upload_id)
        .where('seq', '=', seq)
        .executeTakeFirst();
      deleted += Number(res.numDeletedRows);
    }
    return deleted;
  }
}

function assertKey(accountId: string, jobId: string, name: string): void {
  if (!validArtifactKey(accountId, jobId, name)) {
    throw new Error(`artifact key refused: ${JSON.stringify([accountId, jobId, name])}`);
  }
}
