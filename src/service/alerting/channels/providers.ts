import type { ProviderConfig } from '../types.js';

/** PagerDuty Events API v2 base used when OUTPOST_PAGERDUTY_URL is not set. */
export const DEFAULT_PAGERDUTY_URL = 'https://events.pagerduty.com';
/** Opsgenie API bases used when OUTPOST_OPSGENIE_URL / OUTPOST_OPSGENIE_EU_URL are not set. */
export const DEFAULT_OPSGENIE_URL = 'https://api.opsgenie.com';
export const DEFAULT_OPSGENIE_EU_URL = 'https://api.eu.opsgenie.com';
/** Twilio API base used when OUTPOST_TWILIO_URL is not set. */
export const DEFAULT_TWILIO_URL = 'https://api.twilio.com';

/** The variables EMAIL channels need, in the words of a delivery error. */
export const SMTP_VARIABLES = ['OUTPOST_SMTP_URL', 'OUTPOST_SMTP_FROM'] as const;
/** The variables SMS and CALL channels need. */
export const TWILIO_VARIABLES = [
  'OUTPOST_TWILIO_ACCOUNT_SID',
  'OUTPOST_TWILIO_AUTH_TOKEN',
  'OUTPOST_TWILIO_FROM',
] as const;

function value(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

/** A base URL without its trailing slashes, so `${base}/v2/enqueue` has one. */
function base(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  return (value(env, name) ?? fallback).replace(/\/+$/, '');
}

/**
 * The alert providers from the environment: SMTP when both
 * `OUTPOST_SMTP_URL` (e.g. `smtp://user:pass@mail.example.com:587`) and `OUTPOST_SMTP_FROM` are
 * set; PagerDuty, Opsgenie (US and EU) and Twilio bases with their public defaults; Twilio
 * credentials when `OUTPOST_TWILIO_ACCOUNT_SID`, `OUTPOST_TWILIO_AUTH_TOKEN` and
 * `OUTPOST_TWILIO_FROM` are all set. A provider left out makes its channels' notifications FAILED
 * with the variables it needs. Empty values count as unset. Never throws.
 */
export function providersFromEnv(env: NodeJS.ProcessEnv = process.env): ProviderConfig {
  const smtpUrl = value(env, 'OUTPOST_SMTP_URL');
  const smtpFrom = value(env, 'OUTPOST_SMTP_FROM');
  const sid = value(env, 'OUTPOST_TWILIO_ACCOUNT_SID');
  const token = value(env, 'OUTPOST_TWILIO_AUTH_TOKEN');
  const from = value(env, 'OUTPOST_TWILIO_FROM');
  return {
    ...(smtpUrl && smtpFrom ? { smtp: { url: smtpUrl, from: smtpFrom } } : {}),
    pagerdutyUrl: base(env, 'OUTPOST_PAGERDUTY_URL', DEFAULT_PAGERDUTY_URL),
    opsgenieUrl: {
      US: base(env, 'OUTPOST_OPSGENIE_URL', DEFAULT_OPSGENIE_URL),
      EU: base(env, 'OUTPOST_OPSGENIE_EU_URL', DEFAULT_OPSGENIE_EU_URL),
    },
    ...(sid && token && from
      ? {
          twilio: {
            url: base(env, 'OUTPOST_TWILIO_URL', DEFAULT_TWILIO_URL),
            accountSid: sid,
            authToken: token,
            from,
          },
        }
      : {}),
  };
}

/** `TYPE channels need A and B` (or `A, B and C`): the error of a channel whose provider is not configured. */
export function notConfigured(types: string, variables: readonly string[]): string {
  const list =
    variables.length <= 1
      ? variables.join('')
      : `${variables.slice(0, -1).join(', ')} and ${variables[variables.length - 1]}`;
  return `${types} channels need ${list}`;
}
