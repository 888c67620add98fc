import type { ProviderConfig } from '../types.js';
import { CHANNEL_MODULES } from './modules.js';

// Each provider's variables and defaults live in its channel module; named here too for code outside the
// channel modules (status-page subscriber mail needs SMTP_VARIABLES).
export { notConfigured } from './channel.js';
export { SMTP_VARIABLES } from './email.js';
export { DEFAULT_OPSGENIE_EU_URL, DEFAULT_OPSGENIE_URL } from './opsgenie.js';
export { DEFAULT_PAGERDUTY_URL } from './pagerduty.js';
export { DEFAULT_TWILIO_URL, TWILIO_VARIABLES } from './twilio.js';

/**
 * The alert providers from the environment: each channel module's `providerEnv` (CHANNEL_MODULES), merged.
 * That is SMTP when both `OUTPOST_SMTP_URL` (e.g. `smtp://user:pass@mail.example.com:587`) and
 * `OUTPOST_SMTP_FROM` are set (email.ts); PagerDuty, Opsgenie (US and EU) and Twilio bases with their public
 * defaults; Twilio credentials when `OUTPOST_TWILIO_ACCOUNT_SID`, `OUTPOST_TWILIO_AUTH_TOKEN` and
 * `OUTPOST_TWILIO_FROM` are all set (twilio.ts). A provider left out makes its channels' notifications FAILED
 * with the variables it needs. Empty values count as unset. Never throws.
 */
export function providersFromEnv(env: NodeJS.ProcessEnv = process.env): ProviderConfig {
  const parts = CHANNEL_MODULES.map((m) => m.providerEnv?.(env) ?? {});
  // PAGERDUTY and OPSGENIE always give their bases, the fields ProviderConfig requires.
  return Object.assign({}, ...parts) as ProviderConfig;
}
