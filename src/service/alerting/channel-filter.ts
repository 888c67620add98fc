import type { ChannelDoc } from './alert-channels/alert-channels.js';
import type { AlertType } from './types.js';

/**
 * Which channel flag lets an alert type through (docs/alerting.md, "Which channel gets what"):
 * failures and escalations `sendFailure`; degradations `sendDegraded`; recoveries `sendRecovery`;
 * a failure that eased to degraded goes to channels that take degradations or recoveries (it is
 * news to both); a degraded recovery to channels taking both (they heard of the degradation);
 * ALERT_SSL `sslExpiry` (decided per milestone, see recordCertificate).
 */
export function channelWants(
  channel: Pick<ChannelDoc, 'sendFailure' | 'sendDegraded' | 'sendRecovery' | 'sslExpiry'>,
  type: AlertType,
): boolean {
  switch (type) {
    case 'ALERT_FAILURE':
    case 'ALERT_FAILURE_REMAIN':
    case 'ALERT_DEGRADED_FAILURE':
      return channel.sendFailure !== false;
    case 'ALERT_DEGRADED':
    case 'ALERT_DEGRADED_REMAIN':
      return channel.sendDegraded === true;
    case 'ALERT_FAILURE_DEGRADED':
      return channel.sendDegraded === true || channel.sendRecovery !== false;
    case 'ALERT_RECOVERY':
      return channel.sendRecovery !== false;
    case 'ALERT_DEGRADED_RECOVERY':
      return channel.sendRecovery !== false && channel.sendDegraded === true;
    case 'ALERT_SSL':
      return channel.sslExpiry === true;
  }
}
