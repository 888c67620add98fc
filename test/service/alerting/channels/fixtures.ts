import { expect } from 'vitest';
import type {
  ChannelTarget,
  DeliveryResult,
  NotificationDoc,
  OutgoingNotification,
} from '../../../../src/service/alerting/types.js';

/** The variables of a failure alert of an API check in eu-west-1; `overrides` replace fields. */
export function doc(overrides: Partial<NotificationDoc> = {}): NotificationDoc {
  return {
    ALERT_TITLE: 'checkout API has failed',
    ALERT_TYPE: 'ALERT_FAILURE',
    CHECK_NAME: 'checkout API',
    CHECK_ID: '6f1c1d2e-0000-4000-8000-000000000001',
    CHECK_TYPE: 'API',
    CHECK_DESCRIPTION: 'Checks <checkout> & payment',
    CHECK_RESULT_ID: 'res-1',
    CHECK_ERROR_MESSAGE: 'expected status 200, got 503',
    RESPONSE_TIME: 812,
    API_CHECK_RESPONSE_STATUS_CODE: 503,
    API_CHECK_RESPONSE_STATUS_TEXT: 'Service Unavailable',
    RUN_LOCATION: 'eu-west-1',
    REGION: 'eu-west-1',
    RESULT_LINK: 'https://outpost.example/checks/x/results/res-1',
    STARTED_AT: '2026-11-24T04:00:00.000Z',
    TAGS: ['prod', 'payments'],
    GROUP_NAME: 'Shop',
    SSL_DAYS_REMAINING: null,
    SSL_CHECK_DOMAIN: null,
    IS_REMINDER: false,
    REMINDER_SEQUENCE: 0,
    EPISODE_ID: 'res-0',
    ...overrides,
  };
}

/** A notification of `doc(overrides)` with key `key`. */
export function notification(
  overrides: Partial<NotificationDoc> = {},
  options: { key?: string; accountVariables?: Record<string, string> } = {},
): OutgoingNotification {
  return {
    idempotencyKey: options.key ?? 'chk1.res-0.ALERT_FAILURE.0.7',
    variables: doc(overrides),
    accountVariables: options.accountVariables ?? {},
  };
}

/** A channel of `type` with `config`. */
export function channel(type: string, config: Record<string, unknown>, id = 7): ChannelTarget {
  return { id, type, config };
}

/** A signal that never aborts, for sends the test does not cut short. */
export const never = new AbortController().signal;

/** Asserts no secret appears in any field of `result`, in clear or base64. */
export function expectNoSecret(result: DeliveryResult, secrets: string[]): void {
  const text = JSON.stringify(result);
  for (const secret of secrets) {
    expect(text).not.toContain(secret);
    expect(text).not.toContain(Buffer.from(secret).toString('base64'));
  }
}
