import { accountsModule } from './accounts/service-module.js';
import { agenticModule } from './agentic/service-module.js';
import { alertingModule } from './alerting/service-module.js';
import { auditLogModule } from './audit-log/service-module.js';
import { analyticsModule } from './analytics/service-module.js';
import { checksModule } from './checks/service-module.js';
import { dashboardsModule } from './dashboards/service-module.js';
import { heartbeatsModule } from './heartbeats/service-module.js';
import { maintenanceWindowsModule } from './maintenance-windows/service-module.js';
import type { RetentionNeeds, ServiceModule } from './module.js';
import type { RetentionTask } from './platform/store/retention.js';
import { CHECK_SECRETS, GROUP_SECRETS } from './platform/store/secret-fields.js';
import type { SecretDocTable } from './platform/store/secrets-at-rest.js';
import { channelSecrets } from './alerting/alert-channels/alert-channels.js';
import { CERTIFICATE_SECRETS } from './resources/client-certificates/client-certificates.js';
import { projectsModule } from './projects/service-module.js';
import { resourcesModule } from './resources/service-module.js';
import { runsModule } from './runs/service-module.js';
import { ssoModule } from './sso/service-module.js';
import { statusPagesModule } from './status-pages/service-module.js';
import { triggersModule } from './triggers/service-module.js';
import { usersModule } from './users/service-module.js';

/**
 * Every feature of the service, in order (docs/architecture.md, "Modules"). The order is the order of
 * result recorders (alerting before check statuses), of outbox hooks and of retention (runs first: artifact
 * files go before their results). Add a module by adding it here.
 */
export const MODULES: readonly ServiceModule[] = [
  runsModule,
  checksModule,
  heartbeatsModule,
  alertingModule,
  statusPagesModule,
  resourcesModule,
  analyticsModule,
  accountsModule,
  projectsModule,
  maintenanceWindowsModule,
  dashboardsModule,
  triggersModule,
  auditLogModule,
  usersModule,
  ssoModule,
  agenticModule,
];

/** The retention tasks of every module, in module order (the retention worker adds the platform's own). */
export function retentionTasks(needs: RetentionNeeds): RetentionTask[] {
  return MODULES.flatMap((module) => module.retention?.(needs) ?? []);
}

/**
 * The tables whose documents hold secrets, and where in each document (the modules' secret-field lists):
 * what `sealStoredSecrets` seals and verifies at start-up (docs/security.md).
 */
export const SECRET_DOC_TABLES: readonly SecretDocTable[] = [
  { table: 'checks', layoutOf: () => CHECK_SECRETS },
  { table: 'check_groups', layoutOf: () => GROUP_SECRETS },
  { table: 'client_certificates', layoutOf: () => CERTIFICATE_SECRETS },
  { table: 'alert_channels', layoutOf: (doc) => channelSecrets((JSON.parse(doc) as { type: string }).type) },
];
