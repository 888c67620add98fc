import { createHash } from 'node:crypto';

/** A short id stable for its parts (alerts are keyed by what they are, so a replay finds the same row). */
export function stableId(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);
}
