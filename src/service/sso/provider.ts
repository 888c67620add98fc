import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import * as oidc from 'openid-client';
import { Agent, fetch as undiciFetch } from 'undici';
import { type OutboundPolicy, pinnedConnector } from '../platform/http/outbound-policy.js';

/** Longest a connection to the provider may take to open, ms. */
export const PROVIDER_CONNECT_TIMEOUT_MS = 5_000;
/** Longest one request to the provider may take, answer read in full, ms. */
export const PROVIDER_REQUEST_TIMEOUT_MS = 10_000;
/** Largest answer read from the provider (discovery, keys, tokens, userinfo), bytes. */
export const PROVIDER_MAX_BODY_BYTES = 256 * 1024;
/** How long a provider's discovered configuration is reused, ms. */
export const DISCOVERY_CACHE_MS = 5 * 60_000;
/** Most configurations cached at once (one per account with single sign-on in use). */
const DISCOVERY_CACHE_MAX = 200;

/** An OpenID provider as an account's settings name it. The secret is in clear here only, in memory. */
export type ProviderSettings = { issuer: string; clientId: string; clientSecret: string };

/** Whether `host` (a URL's hostname) is this machine: `localhost`, 127.0.0.0/8 or ::1. */
function isLoopbackHost(host: string): boolean {
  const name = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  return name === '::1';
}

/**
 * Why `issuer` cannot be an issuer URL, or null when it can: an absolute https URL without query or
 * fragment; plain http only on a loopback host (a provider on the operator's own machine, which the
 * outbound policy refuses unless OUTPOST_OUTBOUND_ALLOW names it).
 */
export function issuerProblem(issuer: string): string | null {
  if (!URL.canParse(issuer)) return 'is not a URL';
  const url = new URL(issuer);
  if (url.search !== '' || url.hash !== '') return 'must not have a query or a fragment';
  if (url.username !== '' || url.password !== '') return 'must not hold credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return null;
  return 'must be an https URL';
}

/** An error of the provider's answer that says nothing of what was sent (no code, token or secret). */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
}

/**
 * The fetch openid-client makes every request to the provider with: through the outbound address policy
 * (every address checked, the connection pinned to it), no redirects followed, at most
 * PROVIDER_REQUEST_TIMEOUT_MS for the whole exchange and PROVIDER_MAX_BODY_BYTES of answer.
 */
export function policyFetch(policy: OutboundPolicy): oidc.CustomFetch {
  const dispatcher = new Agent({
    connect: pinnedConnector(policy, { timeout: PROVIDER_CONNECT_TIMEOUT_MS }),
    headersTimeout: PROVIDER_REQUEST_TIMEOUT_MS,
    bodyTimeout: PROVIDER_REQUEST_TIMEOUT_MS,
  });
  return async (url, options) => {
    const timeout = AbortSignal.timeout(PROVIDER_REQUEST_TIMEOUT_MS);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const answer = await undiciFetch(url, {
      method: options.method,
      headers: options.headers as unknown as Record<string, string>,
      ...(options.body === undefined ? {} : { body: options.body as string }),
      redirect: 'manual',
      signal,
      dispatcher,
    });
    const declared = Number(answer.headers.get('content-length') ?? '0');
    if (declared > PROVIDER_MAX_BODY_BYTES) {
      await answer.body?.cancel();
      throw new ProviderError(`the provider's answer is over ${PROVIDER_MAX_BODY_BYTES} bytes`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    if (answer.body) {
      for await (const chunk of answer.body) {
        total += (chunk as Uint8Array).byteLength;
        if (total > PROVIDER_MAX_BODY_BYTES) {
          await answer.body.cancel().catch(() => {});
          throw new ProviderError(`the provider's answer is over ${PROVIDER_MAX_BODY_BYTES} bytes`);
        }
        chunks.push(Buffer.from(chunk as Uint8Array));
      }
    }
    const noBody = [101, 204, 205, 304].includes(answer.status);
    return new Response(noBody ? null : Buffer.concat(chunks), {
      status: answer.status,
      statusText: answer.statusText,
      headers: new Headers([...answer.headers]),
    });
  };
}

/**
 * The OpenID providers of the accounts: discovery (RFC 8414 / OpenID Connect Discovery) through
 * {@link policyFetch}, each configuration kept DISCOVERY_CACHE_MS so a sign-in does not discover twice.
 */
export class Providers {
  readonly #fetch: oidc.CustomFetch;
  readonly #cache = new Map<string, { at: number; config: Promise<oidc.Configuration> }>();
  readonly #now: () => number;

  constructor(policy: OutboundPolicy, now: () => number = Date.now) {
    this.#fetch = policyFetch(policy);
    this.#now = now;
  }

  /**
   * The provider's configuration, discovered (or cached). The client authenticates with HTTP Basic
   * (`client_secret_basic`, what Keycloak, Authentik and Google accept by default).
   * @throws the discovery's error: OutboundRefusedError (in its cause chain), ProviderError, or
   *   openid-client's errors for an answer that is not a provider's metadata for this issuer.
   */
  async configuration(settings: ProviderSettings): Promise<oidc.Configuration> {
    const key = createHash('sha256')
      .update(`${settings.issuer}\n${settings.clientId}\n${settings.clientSecret}`)
      .digest('hex');
    const now = this.#now();
    const cached = this.#cache.get(key);
    if (cached && now - cached.at < DISCOVERY_CACHE_MS) return cached.config;
    const config = this.discover(settings);
    if (this.#cache.size >= DISCOVERY_CACHE_MAX) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(key, { at: now, config });
    config.catch(() => this.#cache.delete(key));
    return config;
  }

  /** Discovers the provider afresh (no cache): what saving the settings checks. @throws as configuration. */
  async discover(settings: ProviderSettings): Promise<oidc.Configuration> {
    const issuer = new URL(settings.issuer);
    return oidc.discovery(
      issuer,
      settings.clientId,
      undefined,
      oidc.ClientSecretBasic(settings.clientSecret),
      {
        [oidc.customFetch]: this.#fetch,
        timeout: PROVIDER_REQUEST_TIMEOUT_MS / 1000,
        ...(issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
      },
    );
  }
}

/** Why a provider call failed, in words safe to log and answer: the error's kind, never its data. */
export function describeProviderError(err: unknown): string {
  const parts: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; cur instanceof Error && depth < 4; depth++) {
    const code = (cur as { code?: unknown }).code;
    parts.push(typeof code === 'string' ? `${cur.message} (${code})` : cur.message);
    cur = cur.cause;
  }
  return parts.join(': ').slice(0, 500) || 'unknown error';
}
