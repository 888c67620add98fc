import { type Static, type TObject, Type } from '@sinclair/typebox';
import type { ChannelSender, ProviderConfig } from '../types.js';

/**
 * One alert channel type, whole: what its `config` is, which of its fields are secrets, and how a
 * notification is sent. Each `channels/<type>.ts` exports one (twilio.ts two: SMS and CALL), and
 * everything per type derives from the list of them (channels/modules.ts): the API's `type` enum and
 * `config` schemas (alert-channels/schema.ts), the secret fields, the senders (channels/index.ts) and the
 * providers read from the environment (providers.ts).
 */
export interface ChannelModule<Type extends string = string, Config extends TObject = TObject> {
  /** The channel type: the `type` of the API and of stored channels (`EMAIL`, `WEBHOOK`, …). */
  readonly type: Type;
  /**
   * The JSON Schema of `config` on create and update (docs/api.md, "Alert channel"): errors name
   * `config.<field>`. Answers use it without `required` beyond what is always stored (alert-channels/schema.ts).
   */
  readonly configSchema: Config;
  /**
   * The `config` fields holding integration secrets: sealed at rest, answered masked (`*****`, kept when
   * sent back so), scrubbed from delivery attempts. Webhook credential headers are secrets too, by name
   * (alert-channels.ts, channelSecrets).
   */
  readonly secretFields: readonly (keyof Static<Config> & string)[];
  /** Delivers one notification to a channel of this type. Never throws; finishes by its signal. */
  readonly send: ChannelSender;
  /**
   * The part of the providers this type needs, read from the environment (`OUTPOST_SMTP_URL`, …): merged
   * with the other types' into the ProviderConfig (providersFromEnv). Absent for types that reach a URL of
   * the channel's own config (WEBHOOK, SLACK). Never throws.
   */
  readonly providerEnv?: (env: NodeJS.ProcessEnv) => Partial<ProviderConfig>;
}

/** `module`, its `type` kept as a literal (so the list of modules gives the union of channel types). */
export function channelModule<const T extends string, C extends TObject>(
  module: ChannelModule<T, C>,
): ChannelModule<T, C> {
  return module;
}

/** A channel's display name (`config.name` of WEBHOOK, SMS, CALL and OPSGENIE): 1–255 characters. */
export const ChannelName = Type.String({ minLength: 1, maxLength: 255 });

/** An integration secret of a config (a key, a routing key, a signing secret): 1–1 024 characters. */
export const SecretString = Type.String({ minLength: 1, maxLength: 1024 });

/** `env[name]` trimmed, or undefined when unset or empty. */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

/** A base URL from `env[name]` (else `fallback`) without its trailing slashes, so `${base}/v2/enqueue` has one. */
export function envBase(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  return (envValue(env, name) ?? fallback).replace(/\/+$/, '');
}

/** `TYPE channels need A and B` (or `A, B and C`): the error of a channel whose provider is not configured. */
export function notConfigured(types: string, variables: readonly string[]): string {
  const list =
    variables.length <= 1
      ? variables.join('')
      : `${variables.slice(0, -1).join(', ')} and ${variables[variables.length - 1]}`;
  return `${types} channels need ${list}`;
}
