import type { Kysely, Migration } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * `0026_artifact_store`: artifacts kept in the store itself, for replicas that share no disk
 * (`OUTPOST_ARTIFACT_STORE=database`, the default on PostgreSQL; runs/artifacts/database-store.ts):
 * - `artifacts`: one row per stored artifact of a job, naming the upload that holds its bytes;
 * - `artifact_chunks`: the bytes of each upload in chunks of at most 1 MiB, in order (`seq` from 0).
 * An upload writes its chunks under a new `upload_id`, then points the artifact's row at it and deletes the
 * chunks of the upload it replaces, in one transaction: a reader sees the old bytes or the new, never half.
 * With artifacts in files (the default on SQLite) both tables stay empty.
 */
export const artifactStore: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('artifacts')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('upload_id', 'text', (c) => c.notNull())
      .addColumn('size_bytes', 'bigint', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('artifacts_pk', ['account_id', 'job_id', 'name'])
      .execute();
    await db.schema
      .createTable('artifact_chunks')
      .addColumn('upload_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('data', isPostgres(db) ? 'bytea' : 'blob', (c) => c.notNull())
      // When the chunk was written, epoch ms: chunks of an upload that never completed go after an hour.
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('artifact_chunks_pk', ['upload_id', 'seq'])
      .execute();
    await db.schema
      .createIndex('artifact_chunks_created')
      .on('artifact_chunks')
      .column('created_at')
      .execute();
  },
};
