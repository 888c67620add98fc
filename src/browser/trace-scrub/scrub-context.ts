import { REDACTED } from '../../common/redaction.js';
import {
  MAX_SECRETS,
  MIN_CREDENTIAL_TOKEN_LENGTH,
  MIN_SECRET_LENGTH,
  Scrubber,
  credentialTokens,
  secretForms,
} from '../../common/scrub.js';
import { BytePatterns } from './byte-patterns.js';
import type { ScrubCounts } from './types.js';

/** The state of one scrub: the Scrubber, the credential values found, the counts. */
export class ScrubContext {
  /** Scrubs the secrets, then the credential values as they are found. */
  readonly scrubber: Scrubber;
  /** What was replaced so far. */
  readonly counts: ScrubCounts;
  /** Credential values (and their tokens) found in traces, searched in the final scan. */
  readonly credentialValues = new Set<string>();

  /** @param secrets the run's secret values (those shorter than MIN_SECRET_LENGTH are counted, not scrubbed). */
  constructor(secrets: string[]) {
    this.scrubber = new Scrubber(secrets);
    const short = new Set(
      secrets.filter((s) => typeof s === 'string' && s.length > 0 && s.length < MIN_SECRET_LENGTH),
    );
    this.counts = { secretValues: 0, credentialHeaders: 0, shortSecretsNotScrubbed: short.size };
  }

  /**
   * Records a credential value seen: its tokens (the token after `Bearer`, each cookie's value)
   * are scrubbed everywhere else too (a cookie's value in a snapshot's script), as long as the
   * Scrubber has room for more values (the secrets first); each is searched in the final scan
   * regardless. The whole value only when it has no token: a whole value holds its tokens, so
   * scrubbing them scrubs it, and every value more costs a pass over every text.
   */
  credential(value: string): void {
    if (value.length === 0 || value === REDACTED) return;
    const [whole, ...tokens] = credentialTokens(value);
    for (const token of tokens.length > 0 ? tokens : [whole as string]) {
      if (this.credentialValues.has(token)) continue;
      this.credentialValues.add(token);
      if (this.scrubber.secrets().length < MAX_SECRETS) this.scrubber.add(token);
    }
  }

  /** `text` scrubbed, counting the values replaced. */
  text(text: string): string {
    const out = this.scrubber.text(text);
    if (out !== text)
      this.counts.secretValues += Math.max(1, occurrences(out, REDACTED) - occurrences(text, REDACTED));
    return out;
  }

  /** The final scan's patterns: every form of every secret, and of every credential value of 6 characters or more. */
  finalPatterns(): BytePatterns {
    const forms: string[] = [];
    for (const secret of this.scrubber.secrets()) forms.push(...secretForms(secret));
    for (const value of this.credentialValues) {
      if (value.length >= MIN_CREDENTIAL_TOKEN_LENGTH) forms.push(...secretForms(value));
    }
    return new BytePatterns(forms);
  }
}

/** Occurrences of `what` in `text`, not overlapping. */
export const occurrences = (text: string, what: string) => {
  let count = 0;
  for (let at = text.indexOf(what); at !== -1; at = text.indexOf(what, at + what.length)) count++;
  return count;
};
