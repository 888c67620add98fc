import { createHmac } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/store/database.js';
import { secretBoxOf } from '../../platform/store/secret-box.js';
import { type DomainRow, DomainQueries } from './store.js';

/**
 * Custom domains of status pages (docs/status-pages.md, "Custom domains"): a page's `customDomain` serves the
 * page at the domain's root only once it is verified, by a DNS TXT record
 * `_outpost-challenge.{domain}` = `outpost-verify={token}`, or because the operator's allow-list
 * (OUTPOST_STATUS_PAGE_DOMAINS) covers it. At most one page holds a domain verified, across every account.
 */

/** The DNS name under the domain that holds the TXT record: `_outpost-challenge.{domain}`. */
export const CHALLENGE_LABEL = '_outpost-challenge';
/** What the TXT record's text starts with, followed by the token. */
export const CHALLENGE_PREFIX = 'outpost-verify=';
/** `SecretBox.deriveKey` purpose of the verification tokens. */
const TOKEN_PURPOSE = 'status-page-custom-domain';

/**
 * Told after a change of status pages that the served custom domains may show (a domain verified or put back
 * to pending; a page created, updated or deleted), and awaited before the change is answered: the service's
 * `CustomDomains.pagesChanged` (public/access.ts), so the next request sees the change.
 */
export type PagesChanged = () => Promise<void>;

/** A {@link PagesChanged} that tells nobody. */
const NOBODY: PagesChanged = async () => {};

/** How a page's custom domain was verified. */
export type DomainVerifiedBy = 'TXT' | 'ALLOW_LIST';

/** The record that proves control of a domain, as the API shows it. */
export type DomainVerificationRecord = { type: 'TXT'; name: string; value: string };

/** Options of {@link CustomDomainPolicy}. */
export type CustomDomainPolicyOptions = {
  /** The service's public URL (OUTPOST_APP_URL): its host is never a custom domain. */
  appUrl: string;
  /** OUTPOST_STATUS_PAGE_DOMAINS, as parsed by `parseDomainAllowList` (lower-case); default none. */
  allowList?: readonly string[];
  /** OUTPOST_DNS_SERVERS (`address` or `address:port`); default the system's resolvers. */
  dnsServers?: readonly string[];
  /** The longest one TXT lookup may take, ms, retries included; default 10 000. */
  lookupTimeoutMs?: number;
};

/**
 * What the service allows as a custom domain and how it checks one: the service's own host names (never a
 * custom domain), the operator's allow-list (active without a TXT record) and the TXT lookup.
 */
export class CustomDomainPolicy {
  /** The host of the service's public URL, lower-case, without a final dot. */
  readonly appHost: string;
  /** Allow-list entries: `.suffix` (every name under it) or a name (that name only), lower-case. */
  readonly allowList: readonly string[];
  readonly #dnsServers: readonly string[] | undefined;
  readonly #lookupTimeoutMs: number;

  /** @throws TypeError when `options.appUrl` is not a URL. */
  constructor(options: CustomDomainPolicyOptions) {
    this.appHost = new URL(options.appUrl).hostname.toLowerCase().replace(/\.$/, '');
    this.allowList = Object.freeze((options.allowList ?? []).map((entry) => entry.toLowerCase()));
    this.#dnsServers = options.dnsServers;
    this.#lookupTimeoutMs = options.lookupTimeoutMs ?? 10_000;
  }

  /**
   * Whether `domain` (any case, a final dot ignored) is one of the service's own host names, which are never
   * a custom domain: the host of the public URL, `localhost` and the names under it, and
   * `localhost.localdomain`.
   */
  isServiceHost(domain: string): boolean {
    const d = domain.toLowerCase().replace(/\.$/, '');
    return (
      d === this.appHost || d === 'localhost' || d.endsWith('.localhost') || d === 'localhost.localdomain'
    );
  }

  /** Whether the operator's allow-list covers `domain` (any case): then it needs no TXT record. */
  isAllowListed(domain: string): boolean {
    const d = domain.toLowerCase().replace(/\.$/, '');
    return this.allowList.some((entry) => (entry.startsWith('.') ? d.endsWith(entry) : d === entry));
  }

  /**
   * Looks up the TXT records of `name` and tells whether one of them (its strings joined) is `value`.
   * Never throws: a lookup that fails or takes longer than the lookup timeout is a problem.
   * @returns null when a record holds `value`; else why not, in words for the API.
   */
  async txtProblem(name: string, value: string): Promise<string | null> {
    // A resolver per lookup: cancelling it at the deadline cancels this lookup only.
    const resolver = new Resolver({ timeout: Math.max(1, Math.floor(this.#lookupTimeoutMs / 3)), tries: 2 });
    if (this.#dnsServers) resolver.setServers([...this.#dnsServers]);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        resolver.cancel();
        reject(Object.assign(new Error('DNS lookup timed out'), { code: 'ETIMEOUT' }));
      }, this.#lookupTimeoutMs);
    });
    try {
      const records = await Promise.race([resolver.resolveTxt(name), deadline]);
      const texts = records.map((chunks) => chunks.join('').trim());
      if (texts.includes(value)) return null;
      if (texts.length === 0) return `no TXT record at ${name}: add one with the text ${value}`;
      return `the TXT records at ${name} do not include ${value}`;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA') {
        return `no TXT record at ${name}: add one with the text ${value}`;
      }
      if (code === 'ETIMEOUT' || code === 'ECANCELLED') return `the DNS lookup of ${name} timed out`;
      return `the DNS lookup of ${name} failed (${typeof code === 'string' ? code : 'error'})`;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The TXT record that proves an account controls `domain`: `_outpost-challenge.{domain}` with the text
 * `outpost-verify={token}`, the token being 32 hex digits of HMAC-SHA256(a key derived from the service's
 * encryption key, `{accountId}:{domain}`): the same for every page of the account, unguessable by another
 * account, and never stored.
 */
export function verificationRecord(
  db: Kysely<Database>,
  accountId: string,
  domain: string,
): DomainVerificationRecord {
  const d = domain.toLowerCase().replace(/\.$/, '');
  const token = createHmac('sha256', secretBoxOf(db).deriveKey(TOKEN_PURPOSE))
    .update(`${accountId}:${d}`)
    .digest('hex')
    .slice(0, 32);
  return { type: 'TXT', name: `${CHALLENGE_LABEL}.${d}`, value: `${CHALLENGE_PREFIX}${token}` };
}

/** Why a domain is refused as one of the service's own host names (the API's 400, a pending domain's problem). */
export function serviceHostProblem(domain: string): string {
  return `${domain} is a host name of this service itself, never a custom domain`;
}

/** Why a pending domain cannot be verified while another page holds it. */
function heldProblem(domain: string): string {
  return `another status page serves ${domain}; it keeps the domain until that page gives it up`;
}

/**
 * Checks a page's custom domain now and records the outcome: verified (by the allow-list when it covers the
 * domain, else by its TXT record), or still pending with the reason. Never verified: one of the service's own
 * host names, or a domain another page holds verified (the partial unique index settles a race). A page
 * that got verified (or put back to pending) is told to `changed` before this returns, so the domain serves
 * it at once.
 * @param page the page's id, account and `custom_domain` column (lower-case) as read before the check: the
 *   outcome is written only while the page still has that domain.
 * @returns whether the domain is verified now. Throws only when the store does.
 */
export async function verifyCustomDomain(
  db: Kysely<Database>,
  policy: CustomDomainPolicy,
  page: Pick<DomainRow, 'id' | 'account_id' | 'custom_domain' | 'custom_domain_verified_at'>,
  nowMs: number,
  changed: PagesChanged,
): Promise<boolean> {
  const domain = page.custom_domain;
  if (domain === null) return false;
  const rows = new DomainQueries(db);
  if (policy.isServiceHost(domain)) {
    if (page.custom_domain_verified_at === null) {
      await rows.recordCheck(page.id, domain, serviceHostProblem(domain), nowMs);
    } else {
      await rows.unverify(page.id, domain, serviceHostProblem(domain), nowMs);
      await changed();
    }
    return false;
  }
  if (page.custom_domain_verified_at !== null) return true;
  if (await rows.heldElsewhere(domain, page.id)) {
    await rows.recordCheck(page.id, domain, heldProblem(domain), nowMs);
    return false;
  }
  let by: DomainVerifiedBy = 'ALLOW_LIST';
  if (!policy.isAllowListed(domain)) {
    const record = verificationRecord(db, page.account_id, domain);
    const problem = await policy.txtProblem(record.name, record.value);
    if (problem !== null) {
      await rows.recordCheck(page.id, domain, problem, nowMs);
      return false;
    }
    by = 'TXT';
  }
  if (!(await rows.markVerified(page.id, domain, by, nowMs))) {
    await rows.recordCheck(page.id, domain, heldProblem(domain), nowMs);
    return false;
  }
  await changed();
  return true;
}

/** Options of {@link recheckPendingDomains}. */
export type RecheckOptions = {
  nowMs: number;
  /** A pending domain is checked again once its last check is this old, ms. */
  recheckMs: number;
  /** At most this many domains per pass (default 20), this many at once (default 4). */
  limit?: number;
  concurrency?: number;
  /** Told when a check verified a domain; default nobody. */
  changed?: PagesChanged;
};

/**
 * One pass of the periodic refresh over pending custom domains: each one not checked for `recheckMs` (the
 * longest unchecked first, at most `limit`) is checked again ({@link verifyCustomDomain}).
 * @returns how many got verified. Throws only when the store does.
 */
export async function recheckPendingDomains(
  db: Kysely<Database>,
  policy: CustomDomainPolicy,
  options: RecheckOptions,
): Promise<number> {
  const due = await new DomainQueries(db).pendingDue(options.nowMs - options.recheckMs, options.limit ?? 20);
  let verified = 0;
  let next = 0;
  const worker = async () => {
    while (next < due.length) {
      const page = due[next++]!;
      if (await verifyCustomDomain(db, policy, page, options.nowMs, options.changed ?? NOBODY)) verified++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 4, due.length) }, worker));
  return verified;
}

/**
 * Brings the stored verifications in line with this process's settings, at start-up: a verified domain that
 * is now one of the service's own host names, or that the allow-list verified but no longer covers, goes back
 * to pending (the next check may verify it by its TXT record); a pending domain the allow-list covers is
 * verified (unless another page holds it). `changed` is told after each verification and once more at the
 * end when any page changed (default nobody: at start-up the served domains are loaded after this).
 * @returns how many pages changed. Throws only when the store does.
 */
export async function reconcileCustomDomains(
  db: Kysely<Database>,
  policy: CustomDomainPolicy,
  nowMs: number,
  changed: PagesChanged = NOBODY,
): Promise<number> {
  const rows = new DomainQueries(db);
  let count = 0;
  for (const page of await rows.verified()) {
    const domain = page.custom_domain!;
    if (policy.isServiceHost(domain)) {
      await rows.unverify(page.id, domain, serviceHostProblem(domain), nowMs);
      count++;
    } else if (page.custom_domain_verified_by === 'ALLOW_LIST' && !policy.isAllowListed(domain)) {
      await rows.unverify(page.id, domain, 'no longer covered by the allow-list: add the TXT record', nowMs);
      count++;
    }
  }
  if (policy.allowList.length > 0) {
    for (const page of await rows.pending()) {
      if (!policy.isAllowListed(page.custom_domain!)) continue;
      if (await verifyCustomDomain(db, policy, page, nowMs, changed)) count++;
    }
  }
  if (count > 0) await changed();
  return count;
}
