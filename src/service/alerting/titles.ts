import type { AlertType } from './types.js';

/** How each alert type reads after the check's name. */
const TITLES: Record<AlertType, string> = {
  ALERT_FAILURE: 'is failing',
  ALERT_FAILURE_REMAIN: 'is still failing',
  ALERT_FAILURE_DEGRADED: 'is degraded (was failing)',
  ALERT_DEGRADED: 'is degraded',
  ALERT_DEGRADED_REMAIN: 'is still degraded',
  ALERT_DEGRADED_FAILURE: 'is failing (was degraded)',
  ALERT_RECOVERY: 'has recovered',
  ALERT_DEGRADED_RECOVERY: 'is no longer degraded',
  ALERT_SSL: 'has an expiring SSL certificate',
};

/** "checkout API is failing" — the title of an alert. */
export function alertTitle(checkName: string, type: AlertType, sslDaysRemaining?: number | null): string {
  if (type === 'ALERT_SSL' && sslDaysRemaining !== undefined && sslDaysRemaining !== null) {
    return sslDaysRemaining < 0
      ? `${checkName}: the SSL certificate has expired`
      : `${checkName}: the SSL certificate expires in ${sslDaysRemaining} day${sslDaysRemaining === 1 ? '' : 's'}`;
  }
  return `${checkName} ${TITLES[type]}`;
}
