import type { TestProject } from 'vitest/node';
import { openPostgresDatabase } from '../../src/service/platform/store/postgres.js';
import { missingRequirement } from './requirements.js';
import {
  createDatabase,
  POSTGRES_REQUIREMENT,
  type PostgresCluster,
  startPostgresCluster,
} from './postgres.js';

/** The database every test store of the `postgres` project is copied from: migrated once. */
export const TEMPLATE_DATABASE = 'outpost_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `postgres://…/postgres` of the run's cluster (superuser), or '' when PostgreSQL is missing. */
    postgresAdminUrl: string;
  }
}

let cluster: PostgresCluster | undefined;

/**
 * Global setup of the `postgres` test project: one throwaway cluster for the whole run, and a
 * migrated template database each test store is created from (`CREATE DATABASE … TEMPLATE`), so a
 * test pays a copy, not the migrations.
 */
export async function setup(project: TestProject): Promise<void> {
  if (missingRequirement([POSTGRES_REQUIREMENT]) !== null) {
    project.provide('postgresAdminUrl', '');
    return;
  }
  cluster = await startPostgresCluster();
  const admin = cluster.url();
  const template = await createDatabase(admin);
  const db = await openPostgresDatabase(template);
  await db.destroy();
  const client = new (await import('pg')).default.Client({ connectionString: admin });
  await client.connect();
  await client.query(`alter database ${new URL(template).pathname.slice(1)} rename to ${TEMPLATE_DATABASE}`);
  await client.end();
  project.provide('postgresAdminUrl', admin);
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
}
