import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import { core } from './0001_core.js';
import { resources } from './0002_resources.js';
import { analytics } from './0003_analytics.js';
import { statusPages } from './0004_status_pages.js';
import { privateLocations } from './0005_private_locations.js';
import { queueBounds } from './0006_queue_bounds.js';
import { agentStatus } from './0008_agent_status.js';
import { alerting } from './0009_alerting.js';
import { heartbeats } from './0010_heartbeats.js';
import { webApp } from './0011_web_app.js';
import { publicStatusPages } from './0012_public_status_pages.js';
import { customDomainVerification } from './0013_custom_domain_verification.js';
import { runLocations } from './0014_run_locations.js';
import { apiKeyLastUse } from './0016_api_key_last_use.js';
import { resultDetails } from './0017_result_details.js';
import { testRuns } from './0018_test_runs.js';
import { maintenanceWindows } from './0019_maintenance_windows.js';
import { dashboards } from './0020_dashboards.js';
import { triggers } from './0021_triggers.js';
import { projects } from './0022_projects.js';
import { rateLimits } from './0023_rate_limits.js';
import { dailyRollups } from './0024_daily_rollups.js';
import { resultPartitions } from './0025_result_partitions.js';
import { artifactStore } from './0026_artifact_store.js';
import { checksOrder } from './0027_checks_order.js';
import { listVersions } from './0028_list_versions.js';
import { apiKeyRoles } from './0029_api_key_roles.js';
import { users } from './0030_users.js';
import { userTokens } from './0031_user_tokens.js';
import { sso } from './0032_sso.js';
import { auditLog } from './0033_audit_log.js';
import { agentic } from './0034_agentic.js';
import { notificationKinds } from './0035_notification_kinds.js';
import { checksByName } from './0036_checks_by_name.js';
import { heartbeatLateResults } from './0037_heartbeat_late_results.js';

/**
 * Migrations in code, one file each (`NNNN_<name>.ts`), applied in name order. The names
 * are stored in the `kysely_migration` table of every existing store, so a migration is
 * never renamed, edited or removed once released: a change is a new file with the next
 * number. (The one edit since release changed what a released migration does on PostgreSQL
 * only, before any PostgreSQL store existed: `real` became `double precision`, which SQLite
 * reads as the same REAL affinity and PostgreSQL as 8-byte floats instead of 4-byte ones.)
 * Only portable column types (text, integer, double precision, bigint), so the same migrations
 * run on both stores; the one dialect-specific column definition is in `./dialect.ts`.
 */
const migrations: Record<string, Migration> = {
  '0001_core': core,
  '0002_resources': resources,
  '0003_analytics': analytics,
  '0004_status_pages': statusPages,
  '0005_private_locations': privateLocations,
  '0006_queue_bounds': queueBounds,
  '0008_agent_status': agentStatus,
  '0009_alerting': alerting,
  '0010_heartbeats': heartbeats,
  '0011_web_app': webApp,
  '0012_public_status_pages': publicStatusPages,
  '0013_custom_domain_verification': customDomainVerification,
  '0014_run_locations': runLocations,
  '0016_api_key_last_use': apiKeyLastUse,
  '0017_result_details': resultDetails,
  '0018_test_runs': testRuns,
  '0019_maintenance_windows': maintenanceWindows,
  '0020_dashboards': dashboards,
  '0021_triggers': triggers,
  '0022_projects': projects,
  '0023_rate_limits': rateLimits,
  '0024_daily_rollups': dailyRollups,
  '0025_result_partitions': resultPartitions,
  '0026_artifact_store': artifactStore,
  '0027_checks_order': checksOrder,
  '0028_list_versions': listVersions,
  '0029_api_key_roles': apiKeyRoles,
  '0030_users': users,
  '0031_user_tokens': userTokens,
  '0032_sso': sso,
  '0033_audit_log': auditLog,
  '0034_agentic': agentic,
  '0035_notification_kinds': notificationKinds,
  '0036_checks_by_name': checksByName,
  '0037_heartbeat_late_results': heartbeatLateResults,
};

class InCodeProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/** Brings the schema to the latest migration. Throws the migration's error when one fails. */
export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  const migrator = new Migrator({ db, provider: new InCodeProvider() });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}

/**
 * Brings the schema to the migration named `name` (`NNNN_<name>`), no further: for tests of a migration that
 * converts stored data (they fill a store as an earlier version left it, then migrate to the latest).
 * Throws the migration's error when one fails.
 */
export async function migrateTo(db: Kysely<unknown>, name: string): Promise<void> {
  const migrator = new Migrator({ db, provider: new InCodeProvider() });
  const { error } = await migrator.migrateTo(name);
  if (error) throw error;
}

/** The name of the newest migration applied to `db` (`kysely_migration`), or null on a store never migrated. */
export async function latestMigration(db: Kysely<unknown>): Promise<string | null> {
  const row = await (db as Kysely<{ kysely_migration: { name: string } }>)
    .selectFrom('kysely_migration')
    .select((eb) => eb.fn.max('name').as('latest'))
    .executeTakeFirst();
  return row?.latest ?? null;
}
