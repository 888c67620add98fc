import type { ServiceModule } from '../module.js';
import { AuditRecorder } from './recorder.js';
import { auditLogRoutes } from './routes.js';
import { AuditQueries } from './store.js';

/**
 * The audit log (docs/teams.md, "Audit log"): every successful change through a `/v1` route declaring
 * `write`, `admin` or `owner`, whichever module owns it, and every sign-in and sign-out of the web app, kept
 * OUTPOST_AUDIT_RETENTION_DAYS (default 365) and listed by `GET /v1/audit-log` [admin].
 */
export const auditLogModule: ServiceModule = {
  name: 'audit-log',
  routes: auditLogRoutes,
  requestHooks(ctx) {
    const recorder = new AuditRecorder(ctx.db, ctx.log);
    return {
      v1: (scope) => recorder.hook(scope),
      authEvent: (event) => recorder.authEvent(event),
      settled: () => recorder.flushed(),
    };
  },
  retention: () => [
    {
      counted: 'auditEntries',
      run: (pass) =>
        pass.batches((limit) => new AuditQueries(pass.db).deleteOlderThan(pass.auditCutoffMs, limit)),
    },
  ],
};
