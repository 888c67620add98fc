import { Type } from '@sinclair/typebox';
import { strict } from '../../platform/http/schema-helpers.js';
import type {
  ChannelSender,
  ChannelTarget,
  DeliveryResult,
  OutgoingNotification,
  ProviderConfig,
} from '../types.js';
import { ChannelName, channelModule, envBase, envValue, notConfigured } from './channel.js';
import { guarded, requiredString } from './config.js';
import { noAnswer, sendRequest } from './http.js';
import { callTwiml, smsMessage } from './message.js';

/** Twilio API base used when OUTPOST_TWILIO_URL is not set. */
export const DEFAULT_TWILIO_URL = 'https://api.twilio.com';
/** The variables SMS and CALL channels need. */
export const TWILIO_VARIABLES = [
  'OUTPOST_TWILIO_ACCOUNT_SID',
  'OUTPOST_TWILIO_AUTH_TOKEN',
  'OUTPOST_TWILIO_FROM',
] as const;

/**
 * The Twilio provider from the environment: `twilio` when `OUTPOST_TWILIO_ACCOUNT_SID`,
 * `OUTPOST_TWILIO_AUTH_TOKEN` and `OUTPOST_TWILIO_FROM` are all set (empty counts as unset), its base
 * `OUTPOST_TWILIO_URL` (default DEFAULT_TWILIO_URL); else nothing (SMS and CALL notifications then fail
 * naming TWILIO_VARIABLES).
 */
export function twilioFromEnv(env: NodeJS.ProcessEnv): Pick<ProviderConfig, 'twilio'> {
  const sid = envValue(env, 'OUTPOST_TWILIO_ACCOUNT_SID');
  const token = envValue(env, 'OUTPOST_TWILIO_AUTH_TOKEN');
  const from = envValue(env, 'OUTPOST_TWILIO_FROM');
  if (!sid || !token || !from) return {};
  return {
    twilio: {
      url: envBase(env, 'OUTPOST_TWILIO_URL', DEFAULT_TWILIO_URL),
      accountSid: sid,
      authToken: token,
      from,
    },
  };
}

type Kind = 'SMS' | 'CALL';

/**
 * Posts a message or a call to a Twilio-compatible API: `POST
 * {url}/2010-04-01/Accounts/{sid}/Messages.json` (form `To, From, Body`) or `…/Calls.json` (`To,
 * From, Twiml`), basic auth `sid:token`. A POST here is not idempotent (Twilio takes no
 * idempotency key), so it is repeated only when it surely did not arrive: 429, or a connection
 * that failed before the request was sent (refused, DNS, connect timeout). A 5xx or a timeout
 * after sending is FAILED: the SMS may have gone out, and a second one is worse than none.
 */
async function sendTwilio(
  kind: Kind,
  notification: OutgoingNotification,
  channel: ChannelTarget,
  providers: ProviderConfig,
  signal: AbortSignal,
): Promise<DeliveryResult> {
  const twilio = providers.twilio;
  if (!twilio) return noAnswer('FAILED', notConfigured('SMS and CALL', TWILIO_VARIABLES));
  const to = requiredString(channel, 'number');
  const v = notification.variables;
  const form = new URLSearchParams({ To: to, From: twilio.from });
  if (kind === 'SMS') form.set('Body', smsMessage(v));
  else form.set('Twiml', callTwiml(v));
  const resource = kind === 'SMS' ? 'Messages.json' : 'Calls.json';
  const basic = Buffer.from(`${twilio.accountSid}:${twilio.authToken}`).toString('base64');
  return sendRequest({
    url: `${twilio.url}/2010-04-01/Accounts/${encodeURIComponent(twilio.accountSid)}/${resource}`,
    method: 'POST',
    headers: {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'Outpost-Alerts/1',
    },
    body: form.toString(),
    signal,
    secrets: [twilio.authToken, basic],
    idempotent: false,
    provider: kind === 'SMS' ? 'Twilio (SMS)' : 'Twilio (call)',
    // The operator's endpoint (OUTPOST_TWILIO_URL), not a user's URL.
    policy: null,
  });
}

/** SMS sender: a text of at most 160 characters to `config.number` (see sendTwilio). Never throws. */
const sendSms: ChannelSender = (n, channel, providers, signal) =>
  guarded(() => sendTwilio('SMS', n, channel, providers, signal));

/** CALL sender: a call to `config.number` that reads the alert out (TwiML `<Say>`). Never throws. */
const sendCall: ChannelSender = (n, channel, providers, signal) =>
  guarded(() => sendTwilio('CALL', n, channel, providers, signal));

/** E.164: a plus sign and up to 15 digits, the first not 0. */
const PhoneNumber = Type.String({ pattern: '^\\+[1-9][0-9]{1,14}$' });

/** SMS: a text message to `config.number` through the operator's Twilio account. */
export const smsChannel = channelModule({
  type: 'SMS',
  configSchema: Type.Object({ name: ChannelName, number: PhoneNumber }, strict),
  secretFields: [],
  send: sendSms,
  providerEnv: twilioFromEnv,
});

/** CALL: a phone call to `config.number` through the operator's Twilio account, reading the alert out. */
export const callChannel = channelModule({
  type: 'CALL',
  configSchema: Type.Object({ name: ChannelName, number: PhoneNumber }, strict),
  secretFields: [],
  send: sendCall,
  providerEnv: twilioFromEnv,
});
