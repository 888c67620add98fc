import { urlCredentialForms } from '../../../common/uri.js';
import { createHmac } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { isCredentialHeader } from '../../../common/credential-headers.js';
import { Scrubber } from '../../../common/scrub.js';
import { defaultOutboundPolicy } from '../../platform/http/outbound-policy.js';
import { Nullable, StringEnum, strict } from '../../platform/http/schema-helpers.js';
import type {
  ChannelSender,
  ChannelTarget,
  DeliveryResult,
  NotificationDoc,
  OutgoingNotification,
  ProviderConfig,
} from '../types.js';
import { ChannelName, channelModule, SecretString } from './channel.js';
import { ConfigError, guarded, keyValues, optionalString, requiredString } from './config.js';
import { MAX_ANSWER_CHARS, noAnswer, type ProviderRequest, sendRequest } from './http.js';
import { renderOffThread } from './render.js';
import { discordMessage, htmlChatMessage, teamsMessage } from './chat.js';
import { baseOf, isResult, sendToUserUrl, userUrl } from './outbound.js';

/** Methods a webhook may use; GET, HEAD and DELETE send no body. */
const WEBHOOK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'HEAD', 'DELETE'] as const;
const METHODS: ReadonlySet<string> = new Set(WEBHOOK_METHODS);
const BODYLESS = new Set(['GET', 'HEAD', 'DELETE']);
/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the transport sets itself: a configured value would corrupt the request. */
const TRANSPORT_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
]);
/** Prefix of a Standard Webhooks secret whose rest is the base64 key. */
const WHSEC = 'whsec_';

/**
 * The variables a webhook template sees: the account's variables (`{{VAR}}`), then the
 * notification's (they win on a name clash, so a variable cannot fake ALERT_TYPE).
 */
export function templateVariables(n: OutgoingNotification): Record<string, unknown> {
  return { ...n.accountVariables, ...n.variables };
}

/**
 * The signature headers of a webhook body: `x-checkly-signature` (hex
 * HMAC-SHA256 of the body with the secret's UTF-8 bytes) with `x-checkly-timestamp`, and Standard
 * Webhooks' `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed by
 * the base64-decoded rest of a `whsec_` secret, else its UTF-8 bytes). `webhook-id` and
 * `webhook-timestamp` are always present; the signatures only with a secret.
 * @param timestampS unix seconds.
 */
export function webhookSignatureHeaders(
  id: string,
  timestampS: number,
  body: string,
  secret: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = { 'webhook-id': id, 'webhook-timestamp': String(timestampS) };
  if (secret === undefined) return headers;
  headers['x-checkly-signature'] = createHmac('sha256', secret).update(body).digest('hex');
  headers['x-checkly-timestamp'] = String(timestampS);
  const key = secret.startsWith(WHSEC)
    ? Buffer.from(secret.slice(WHSEC.length), 'base64')
    : Buffer.from(secret);
  headers['webhook-signature'] =
    `v1,${createHmac('sha256', key).update(`${id}.${timestampS}.${body}`).digest('base64')}`;
  return headers;
}

/** The default body: every variable of the notification as JSON (account variables are not sent unasked). */
function defaultBody(v: NotificationDoc): string {
  return JSON.stringify(v);
}

/**
 * The `webhookType`s of the hosted API that Outpost gives a body of their own when `template` is empty
 * (docs/alerting.md, "Chat and push channels"): Microsoft Teams gets an Adaptive Card message, Discord
 * `content` and an embed, Telegram a Bot API `sendMessage`. Other `webhookType`s are kept and sent as
 * plain webhooks.
 */
export const WEBHOOK_PRESETS = ['WEBHOOK_MSTEAMS', 'WEBHOOK_DISCORD', 'WEBHOOK_TELEGRAM'] as const;
/** One of WEBHOOK_PRESETS. */
export type WebhookPreset = (typeof WEBHOOK_PRESETS)[number];

/** The Telegram Bot API's base, where `url` of a WEBHOOK_TELEGRAM channel with a `botToken` points. */
export const TELEGRAM_API_URL = 'https://api.telegram.org';

/** Who answers a preset, in words, for errors. */
const PRESET_PROVIDERS: Record<WebhookPreset, string> = {
  WEBHOOK_MSTEAMS: 'Microsoft Teams',
  WEBHOOK_DISCORD: 'Discord',
  WEBHOOK_TELEGRAM: 'Telegram',
};

function presetOf(channel: ChannelTarget): WebhookPreset | null {
  const type = optionalString(channel, 'webhookType');
  return (WEBHOOK_PRESETS as readonly string[]).includes(type ?? '') ? (type as WebhookPreset) : null;
}

/** A preset's default body when the channel has no template (Telegram's is built with its chat id). */
function presetBody(preset: WebhookPreset, v: NotificationDoc): string {
  return JSON.stringify(preset === 'WEBHOOK_MSTEAMS' ? teamsMessage(v) : discordMessage(v));
}

/**
 * WEBHOOK sender: `method` (default POST) to `url` with `queryParameters` appended and `headers`
 * added; the body is the Handlebars `template` rendered with the notification's and the account's
 * variables (bounded, see template.ts), or the notification as JSON; signed when `webhookSecret` is
 * set. A template that does not compile or render, a header with CR/LF or an invalid name, and a URL
 * that is not http(s) are FAILED; so is a URL whose address the outbound policy (`providers.outbound`, by
 * default defaultOutboundPolicy) refuses. Never throws.
 */
const sendWebhook: ChannelSender = (notification, channel, providers, signal) =>
  guarded(async () => {
    const preset = presetOf(channel);
    const botToken = preset === 'WEBHOOK_TELEGRAM' ? optionalString(channel, 'botToken') : undefined;
    if (botToken !== undefined) return sendTelegram(notification, channel, botToken, providers, signal);
    const secret = optionalString(channel, 'webhookSecret');
    const headers = keyValues(channel, 'headers');
    const query = keyValues(channel, 'queryParameters');
    const secrets = [
      ...(secret ? [secret] : []),
      ...headers.filter((h) => isCredentialHeader(h.key)).map((h) => h.value),
      ...query.filter((q) => isCredentialHeader(q.key)).map((q) => q.value),
      // The contract does not say which account variables are secret: none of them is repeated back.
      ...Object.values(notification.accountVariables),
    ];
    const scrub = new Scrubber(secrets);

    const method = (optionalString(channel, 'method') ?? 'POST').toUpperCase();
    if (!METHODS.has(method)) throw new ConfigError(`webhook method ${method.slice(0, 20)} is not supported`);
    let url: URL;
    try {
      url = new URL(requiredString(channel, 'url'));
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      return noAnswer('FAILED', 'the webhook URL is not a valid URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return noAnswer('FAILED', `the webhook URL must be http or https, not ${url.protocol.slice(0, 20)}`);
    }
    for (const form of urlCredentialForms(url)) scrub.add(form);
    // A chat tool's webhook URL is itself the credential (a token in its path, a signature in its query).
    if (preset !== null) for (const part of [url.toString(), url.pathname, url.search]) scrub.add(part);
    for (const { key, value } of query) url.searchParams.append(key, value);

    let body = '';
    let contentType = 'application/json';
    const template = optionalString(channel, 'template');
    if (template !== undefined && template.trim() !== '') {
      const rendered = await renderOffThread(template, templateVariables(notification), signal);
      if ('error' in rendered) return noAnswer('FAILED', scrub.cut(rendered.error, MAX_ANSWER_CHARS));
      body = rendered.body;
      contentType = rendered.json ? 'application/json' : 'text/plain; charset=utf-8';
      // The hosted API's Telegram channels send `chat_id=…&parse_mode=HTML&text=…` to /sendMessage.
      if (!rendered.json && preset === 'WEBHOOK_TELEGRAM') contentType = 'application/x-www-form-urlencoded';
    } else if (preset !== null && preset !== 'WEBHOOK_TELEGRAM') {
      body = presetBody(preset, notification.variables);
    } else {
      body = defaultBody(notification.variables);
    }
    const sendsBody = !BODYLESS.has(method);
    if (!sendsBody) body = '';

    const out: Record<string, string> = { 'user-agent': 'Outpost-Alerts/1' };
    if (sendsBody) out['content-type'] = contentType;
    for (const { key, value } of headers) {
      if (/[\r\n\0]/.test(key) || /[\r\n\0]/.test(value)) {
        return noAnswer('FAILED', `webhook header ${scrub.cut(key, 100)} holds a line break; refused`);
      }
      if (!TOKEN.test(key)) {
        return noAnswer('FAILED', `webhook header name ${scrub.cut(JSON.stringify(key), 100)} is not valid`);
      }
      if (TRANSPORT_HEADERS.has(key.toLowerCase())) continue;
      out[key.toLowerCase()] = value;
    }
    // Set last: configured headers cannot replace the delivery id or the signatures.
    const timestampS = Math.floor(Date.now() / 1000);
    Object.assign(out, webhookSignatureHeaders(notification.idempotencyKey, timestampS, body, secret));

    const request: ProviderRequest = {
      url: url.toString(),
      method: method as ProviderRequest['method'],
      headers: out,
      body: sendsBody ? body : null,
      signal,
      secrets: scrub.secrets(),
      idempotent: true,
      provider: preset === null ? 'the webhook' : PRESET_PROVIDERS[preset],
      policy: providers.outbound ?? defaultOutboundPolicy(),
    };
    return sendRequest(request);
  });

/**
 * A WEBHOOK_TELEGRAM channel with a `botToken`: the Bot API's `sendMessage` (`POST {url}/bot{token}/sendMessage`,
 * `url` the API base, by default TELEGRAM_API_URL) with `chat_id`, `text` and `parse_mode: HTML`. The text
 * is the rendered `template` when there is one (Telegram's HTML), else the notification in that HTML. The
 * token is sealed and masked like every secret field and scrubbed from errors. Never throws.
 */
async function sendTelegram(
  notification: OutgoingNotification,
  channel: ChannelTarget,
  botToken: string,
  providers: ProviderConfig,
  signal: AbortSignal,
): Promise<DeliveryResult> {
  const chatId = requiredString(channel, 'chatId');
  const scrub = new Scrubber([botToken, ...Object.values(notification.accountVariables)]);
  const base = userUrl(requiredString(channel, 'url'), 'the Telegram API URL');
  if (isResult(base)) return base;
  let text = htmlChatMessage(notification.variables, '\n');
  const template = optionalString(channel, 'template');
  if (template !== undefined && template.trim() !== '') {
    const rendered = await renderOffThread(template, templateVariables(notification), signal);
    if ('error' in rendered) return noAnswer('FAILED', scrub.cut(rendered.error, MAX_ANSWER_CHARS));
    text = rendered.body.slice(0, 4_096);
  }
  const body = JSON.stringify({
    chat_id: chatId,
    text,
    parse_mode: 'HTML',
    link_preview_options: { is_disabled: true },
  });
  return sendToUserUrl({
    url: `${baseOf(base)}/bot${encodeURIComponent(botToken)}/sendMessage`,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body,
    secrets: [...scrub.secrets(), encodeURIComponent(botToken)],
    provider: 'Telegram',
    providers,
    signal,
  });
}

/** A configured header or query parameter; `locked` is for the web app (not sent). */
const KeyValue = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 1024 }),
    value: Type.String({ maxLength: 8192 }),
    locked: Type.Optional(Type.Boolean({ default: false })),
  },
  strict,
);

/**
 * WEBHOOK: a request to the channel's `url` (http or https), its body the notification as JSON or the
 * Handlebars `template`, signed with `webhookSecret`. Credential-named `headers` and `queryParameters`
 * are secrets too (alert-channels.ts, channelSecrets). A `webhookType` of WEBHOOK_PRESETS gives the
 * provider's own body; WEBHOOK_TELEGRAM with `botToken` and `chatId` is a Bot API `sendMessage`.
 */
export const webhookChannel = channelModule({
  type: 'WEBHOOK',
  configSchema: Type.Object(
    {
      name: ChannelName,
      url: Type.String({ maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/]+[^\\s]*$' }),
      method: Type.Optional(StringEnum(WEBHOOK_METHODS, { default: 'POST' })),
      headers: Type.Optional(Type.Array(KeyValue, { maxItems: 50, default: [] })),
      queryParameters: Type.Optional(Type.Array(KeyValue, { maxItems: 50, default: [] })),
      template: Type.Optional(Nullable(Type.String({ maxLength: 65_536 }))),
      webhookSecret: Type.Optional(Nullable(SecretString)),
      webhookType: Type.Optional(
        Nullable(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Z0-9_]+$' })),
      ),
      chatId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
      botToken: Type.Optional(Nullable(SecretString)),
    },
    strict,
  ),
  secretFields: ['webhookSecret', 'botToken'],
  send: sendWebhook,
});
