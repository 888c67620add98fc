import type { ChannelTarget, DeliveryResult } from '../types.js';
import { noAnswer } from './http.js';

/** A channel config that is not what its type needs (a stored config the API validated should never be). */
export class ConfigError extends Error {}

/**
 * `config[name]` as a non-empty string.
 * @throws ConfigError naming `config.<name>` when it is missing or not a string.
 */
export function requiredString(channel: ChannelTarget, name: string): string {
  const value = channel.config[name];
  if (typeof value !== 'string' || value === '') {
    throw new ConfigError(`${channel.type} channel ${channel.id} has no config.${name}`);
  }
  return value;
}

/** `config[name]` when it is a non-empty string, else undefined. */
export function optionalString(channel: ChannelTarget, name: string): string | undefined {
  const value = channel.config[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `config[name]` as `{ key, value }` pairs; anything else in the list is skipped. */
export function keyValues(channel: ChannelTarget, name: string): Array<{ key: string; value: string }> {
  const list = channel.config[name];
  if (!Array.isArray(list)) return [];
  return list.filter(
    (kv): kv is { key: string; value: string } =>
      typeof kv === 'object' && kv !== null && typeof kv.key === 'string' && typeof kv.value === 'string',
  );
}

/**
 * Runs a sender's body and turns anything it throws into a FAILED result, so a sender never throws
 * (a ConfigError keeps its message; anything else is a bug, reported without details that could
 * hold a secret).
 */
export async function guarded(run: () => Promise<DeliveryResult>): Promise<DeliveryResult> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ConfigError) return noAnswer('FAILED', err.message);
    const name = err instanceof Error ? err.name : typeof err;
    return noAnswer('FAILED', `the notification could not be sent (internal error: ${name})`);
  }
}
