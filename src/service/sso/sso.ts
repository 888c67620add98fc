import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import * as oidc from 'openid-client';
import { badField, HttpError } from '../platform/http/errors.js';
import type { OutboundPolicy } from '../platform/http/outbound-policy.js';
import { isRole, rankOf, type Role } from '../platform/http/permissions.js';
import type { Database } from '../platform/store/database.js';
import { type SecretBox, secretBoxOf } from '../platform/store/secret-box.js';
import type { SignInUser } from '../platform/web/sessions.js';
import { describeProviderError, issuerProblem, Providers } from './provider.js';
import { type SsoSettingsRow, SsoQueries } from './store.js';

/** How long a sign-in may stay at the provider before its callback, ms (10 minutes). */
export const SIGN_IN_TTL_MS = 10 * 60_000;
/** The path the provider sends people back to; the redirect URI is the app URL and this path. */
export const CALLBACK_PATH = '/auth/sso/callback';
/** Where an email without single sign-on is sent: the sign-in page says so (the same for every email). */
export const UNAVAILABLE_PATH = '/sign-in?sso=unavailable';

/**
 * The SecretBox additional data of a sealed client secret: bound to its account, as secrets-at-rest.ts
 * verifies it at start.
 */
const secretAad = (accountId: string) => `sso_settings:${accountId}:client_secret`;
/** The SecretBox additional data of a sign-in's sealed verifier and nonce: bound to its state. */
const signInAad = (stateHash: string, field: string) => `sso_sign_ins.${field}:${stateHash}`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Why a sign-in was refused, as the sign-in page is told (`/sign-in?error=<code>`): the code only, never
 * the provider's detail (docs/teams.md, "Single sign-on").
 */
export type SsoFailure =
  /** The state is unknown, used, expired or not this browser's; or the provider's answer did not verify. */
  | 'sso_failed'
  /** The provider said no (the person cancelled, or is not allowed to use the client). */
  | 'sso_denied'
  /** The person's email is outside the account's allowed domains, or the provider gave none. */
  | 'sso_domain'
  /** The email is a person's of the account, but the provider does not say it is verified. */
  | 'sso_unverified'
  /** The identity or email belongs to another account, or the person is linked to another identity. */
  | 'sso_account';

/** A refused sign-in: its code for the page, and the reason for the log (no secret in either). */
export class SsoRefusal extends Error {
  override readonly name = 'SsoRefusal';
  constructor(
    readonly failure: SsoFailure,
    reason: string,
  ) {
    super(reason);
  }
}

/** The settings as `GET /v1/sso` answers them: the client secret never, only whether one is stored. */
export type SsoSettingsView = {
  enabled: boolean;
  issuer: string | null;
  clientId: string | null;
  clientSecretConfigured: boolean;
  defaultRole: Role;
  groupsClaim: string | null;
  groupRoles: Record<string, Role>;
  allowedDomains: string[];
  ssoOnly: boolean;
  /** What to register at the provider as the client's redirect URI. */
  redirectUri: string;
  updatedAt: string | null;
};

/** The body of `PUT /v1/sso`. */
export type SsoSettingsInput = {
  issuer: string;
  clientId: string;
  /** Omitted: keep the stored secret (required the first time). */
  clientSecret?: string;
  defaultRole: Role;
  groupsClaim?: string | null;
  groupRoles?: Record<string, Role>;
  allowedDomains?: string[];
  ssoOnly?: boolean;
};

/** One DNS name of an email domain, lower case: labels of letters, digits and hyphens, a dot between. */
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/** The domain of an email address (after its last `@`), lower case; '' when there is none. */
export function domainOf(email: string): string {
  const at = email.lastIndexOf('@');
  return at < 0 ? '' : email.slice(at + 1).toLowerCase();
}

/**
 * The role the groups give (the highest role any group maps to), or null when none maps to one. A
 * claim that is a string counts as one group; other values give null.
 */
export function mappedRole(groups: unknown, mapping: Readonly<Record<string, Role>>): Role | null {
  const list = typeof groups === 'string' ? [groups] : Array.isArray(groups) ? groups : [];
  let best: Role | null = null;
  for (const group of list.slice(0, 1000)) {
    if (typeof group !== 'string' || !Object.hasOwn(mapping, group)) continue;
    const role = mapping[group]!;
    if (best === null || rankOf(role) > rankOf(best)) best = role;
  }
  return best;
}

/**
 * Whether account `accountId` opens its web sessions by single sign-on only (docs/teams.md, "Single
 * sign-on", `ssoOnly`): password sign-in is then refused with 403 OUTPOST_ERR_SSO_REQUIRED.
 */
export function isSsoOnly(db: Kysely<Database>, accountId: string): Promise<boolean> {
  return new SsoQueries(db).ssoOnly(accountId);
}

/** The message of a sign-in refused because the account signs in by single sign-on only. */
export function ssoRequiredMessage(accountName: string): string {
  return `${accountName} signs in with single sign-on only: use "Sign in with single sign-on"; API keys keep working on the API`;
}

/** A sign-in to send to the provider: where to, and the random value of the browser's binding cookie. */
export type StartedSignIn = { redirectUrl: string; browserBinding: string };

/**
 * Single sign-on with OpenID Connect (docs/teams.md, "Single sign-on"): the account's settings, and the
 * authorization code flow with PKCE (S256), `state` and `nonce`. A sign-in in progress is a row of
 * `sso_sign_ins` (SHA-256 of its state; verifier and nonce sealed), so every replica of the store can
 * finish it and it finishes once; a random value in the browser's `outpost_sso` cookie (its SHA-256 in
 * the row) binds it to the browser that started it.
 */
export class SingleSignOn {
  readonly #queries: SsoQueries;
  readonly #box: SecretBox;
  readonly #providers: Providers;
  readonly #redirectUri: string;
  readonly #now: () => number;

  constructor(
    db: Kysely<Database>,
    options: { appUrl: string; outbound: OutboundPolicy; now?: () => number },
  ) {
    this.#queries = new SsoQueries(db);
    this.#box = secretBoxOf(db);
    this.#now = options.now ?? Date.now;
    this.#providers = new Providers(options.outbound, this.#now);
    this.#redirectUri = `${options.appUrl.replace(/\/+$/, '')}${CALLBACK_PATH}`;
  }

  /** The redirect URI people are sent back to (register it at the provider). */
  get redirectUri(): string {
    return this.#redirectUri;
  }

  /** The account's settings as answered (secret masked). */
  async view(accountId: string): Promise<SsoSettingsView> {
    const row = await this.#queries.settings(accountId);
    if (!row) {
      return {
        enabled: false,
        issuer: null,
        clientId: null,
        clientSecretConfigured: false,
        defaultRole: 'READ_ONLY',
        groupsClaim: null,
        groupRoles: {},
        allowedDomains: [],
        ssoOnly: false,
        redirectUri: this.#redirectUri,
        updatedAt: null,
      };
    }
    return {
      enabled: true,
      issuer: row.issuer,
      clientId: row.client_id,
      clientSecretConfigured: true,
      defaultRole: row.default_role,
      groupsClaim: row.groups_claim,
      groupRoles: groupRolesOf(row),
      allowedDomains: await this.#queries.domains(accountId),
      ssoOnly: row.sso_only === 1,
      redirectUri: this.#redirectUri,
      updatedAt: new Date(row.updated_at).toISOString(),
    };
  }

  /**
   * Saves the account's settings after discovering the issuer through the outbound policy.
   * @throws HttpError 400 naming `issuer` (not a URL, not https, refused by the outbound policy, no
   *   provider there), `clientSecret` (none stored and none given), `allowedDomains`, `groupRoles`;
   *   409 OUTPOST_ERR_SSO_DOMAIN_TAKEN when another account holds one of the domains.
   */
  async save(accountId: string, input: SsoSettingsInput): Promise<SsoSettingsView> {
    const issuer = input.issuer.trim();
    const problem = issuerProblem(issuer);
    if (problem !== null) throw badField('issuer', problem, 'format');
    const stored = await this.#queries.settings(accountId);
    const clientSecret =
      input.clientSecret ?? (stored ? this.#box.open(stored.client_secret, secretAad(accountId)) : undefined);
    if (clientSecret === undefined) {
      throw badField('clientSecret', 'is required: no client secret is stored yet', 'required');
    }
    const domains = [...new Set((input.allowedDomains ?? []).map((d) => d.trim().toLowerCase()))];
    const badDomain = domains.find((d) => !DOMAIN.test(d));
    if (badDomain !== undefined) {
      throw badField(
        'allowedDomains',
        `holds ${JSON.stringify(badDomain)}, which is not a domain name`,
        'format',
      );
    }
    const groupRoles = input.groupRoles ?? {};
    for (const [group, role] of Object.entries(groupRoles)) {
      if (!isRole(role)) throw badField(`groupRoles.${group}`, 'is not a role', 'enum');
    }
    const taken = await this.#queries.domainTaken(accountId, domains);
    if (taken !== undefined) {
      throw new HttpError(
        'OUTPOST_ERR_SSO_DOMAIN_TAKEN',
        `body.allowedDomains: ${taken} signs in to another account's single sign-on`,
        { field: 'allowedDomains', domain: taken },
      );
    }
    let discovered: oidc.Configuration;
    try {
      discovered = await this.#providers.discover({ issuer, clientId: input.clientId, clientSecret });
    } catch (err) {
      throw badField('issuer', `could not be discovered: ${describeProviderError(err)}`, 'discovery');
    }
    const now = this.#now();
    await this.#queries.put(
      {
        account_id: accountId,
        // The issuer as the provider names itself (discovery checked it matches).
        issuer: discovered.serverMetadata().issuer,
        client_id: input.clientId,
        client_secret: this.#box.seal(clientSecret, secretAad(accountId)),
        default_role: input.defaultRole,
        groups_claim: input.groupsClaim ?? null,
        group_roles: JSON.stringify(groupRoles),
        sso_only: input.ssoOnly ? 1 : 0,
        created_at: stored?.created_at ?? now,
        updated_at: now,
      },
      domains,
    );
    return this.view(accountId);
  }

  /** Turns single sign-on off for the account. @returns whether it was on. */
  remove(accountId: string): Promise<boolean> {
    return this.#queries.delete(accountId);
  }

  /**
   * The account whose single sign-on signs in `email`: the account of the person with that email, when
   * it has single sign-on, else the account holding the email's domain; null when none.
   */
  async accountFor(email: string): Promise<string | null> {
    const lower = email.trim().toLowerCase();
    return (
      (await this.#queries.ssoAccountOfEmail(lower)) ??
      (await this.#queries.accountOfDomain(domainOf(lower))) ??
      null
    );
  }

  /**
   * Starts a sign-in for `email`: the provider's authorization URL (code flow, PKCE S256, state, nonce,
   * `login_hint`), the sign-in recorded for SIGN_IN_TTL_MS. Null when no account's single sign-on signs
   * in that email.
   * @throws the provider's discovery error (the caller answers without detail).
   */
  async start(email: string): Promise<StartedSignIn | null> {
    const accountId = await this.accountFor(email);
    if (accountId === null) return null;
    const row = await this.#queries.settings(accountId);
    if (!row) return null;
    const config = await this.#providers.configuration(this.#providerOf(row));
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const verifier = oidc.randomPKCECodeVerifier();
    const browserBinding = randomBytes(32).toString('base64url');
    const stateHash = sha256(state);
    const now = this.#now();
    await this.#queries.insertSignIn(
      {
        state_hash: stateHash,
        account_id: accountId,
        browser_hash: sha256(browserBinding),
        code_verifier: this.#box.seal(verifier, signInAad(stateHash, 'code_verifier')),
        nonce: this.#box.seal(nonce, signInAad(stateHash, 'nonce')),
        created_at: now,
        expires_at: now + SIGN_IN_TTL_MS,
      },
      now,
    );
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.#redirectUri,
      // Standard scopes only: a provider may refuse one it does not know (Keycloak: invalid_scope). Groups
      // come with these (Authentik's profile) or from a mapper on the client (Keycloak).
      scope: 'openid email profile',
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      login_hint: email.trim(),
    });
    return { redirectUrl: url.href, browserBinding };
  }

  /**
   * Finishes a sign-in the provider sent back to `query` (the callback's query string): takes the sign-in
   * its state names (single use; it must not have ended and must be this browser's, `browserBinding`
   * from its cookie), exchanges the code with the verifier, checks the ID token (signature, issuer,
   * audience, nonce), reads the claims (and userinfo), then finds, links or creates the person.
   * @returns the person to open a session for.
   * @throws SsoRefusal with the code for the sign-in page.
   */
  async finish(query: string, browserBinding: string | null): Promise<SignInUser> {
    const params = new URLSearchParams(query);
    const state = params.get('state');
    if (state === null || state.length > 512) throw new SsoRefusal('sso_failed', 'no state');
    const signIn = await this.#queries.takeSignIn(sha256(state));
    if (!signIn) throw new SsoRefusal('sso_failed', 'unknown or used state');
    if (signIn.expires_at <= this.#now()) throw new SsoRefusal('sso_failed', 'the sign-in expired');
    const given = Buffer.from(sha256(browserBinding ?? ''));
    if (browserBinding === null || !timingSafeEqual(given, Buffer.from(signIn.browser_hash))) {
      throw new SsoRefusal('sso_failed', 'the sign-in was started by another browser');
    }
    if (params.has('error')) {
      throw new SsoRefusal('sso_denied', `the provider answered error ${params.get('error')!.slice(0, 100)}`);
    }
    const row = await this.#queries.settings(signIn.account_id);
    if (!row) throw new SsoRefusal('sso_failed', 'single sign-on was turned off meanwhile');
    const stateHash = signIn.state_hash;
    let claims: Record<string, unknown>;
    try {
      const config = await this.#providers.configuration(this.#providerOf(row));
      const tokens = await oidc.authorizationCodeGrant(config, new URL(`${this.#redirectUri}?${params}`), {
        pkceCodeVerifier: this.#box.open(signIn.code_verifier, signInAad(stateHash, 'code_verifier')),
        expectedState: state,
        expectedNonce: this.#box.open(signIn.nonce, signInAad(stateHash, 'nonce')),
        idTokenExpected: true,
      });
      const idClaims = tokens.claims()!;
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
      claims = { ...userinfo, ...idClaims };
    } catch (err) {
      throw new SsoRefusal(
        'sso_failed',
        `the provider's answer did not verify: ${describeProviderError(err)}`,
      );
    }
    return this.#person(row, claims);
  }

  async #person(row: SsoSettingsRow, claims: Record<string, unknown>): Promise<SignInUser> {
    const accountId = row.account_id;
    const subject = `${row.issuer} ${String(claims.sub)}`;
    const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
    const domains = await this.#queries.domains(accountId);
    if (email === '' || (domains.length > 0 && !domains.includes(domainOf(email)))) {
      throw new SsoRefusal('sso_domain', 'the email is missing or outside the allowed domains');
    }
    const mapping = groupRolesOf(row);
    const fromGroups =
      row.groups_claim !== null && Object.keys(mapping).length > 0
        ? (mappedRole(claims[row.groups_claim], mapping) ?? row.default_role)
        : null;
    const now = this.#now();
    let person = await this.#queries.userBySubject(subject);
    if (!person) {
      person = await this.#queries.userByEmail(email);
      if (person && person.account_id !== accountId) {
        throw new SsoRefusal('sso_account', 'the email is a person’s of another account');
      }
      if (person && person.sso_subject !== null) {
        throw new SsoRefusal('sso_account', 'the person is linked to another identity');
      }
      if (person && claims.email_verified !== true) {
        throw new SsoRefusal('sso_unverified', 'the provider does not say the email is verified');
      }
    }
    if (person && person.account_id !== accountId) {
      throw new SsoRefusal('sso_account', 'the identity is a person’s of another account');
    }
    if (person) {
      const role = fromGroups ?? person.role;
      await this.#queries.signedIn(person.id, { sso_subject: subject, role, now });
      return {
        userId: person.id,
        accountId,
        accountName: person.account_name,
        name: person.name,
        email: person.email,
        role,
      };
    }
    const accountName = (await this.#queries.accountName(accountId)) ?? '';
    const name =
      typeof claims.name === 'string' && claims.name.trim() !== ''
        ? claims.name.trim().slice(0, 200)
        : email.slice(0, email.lastIndexOf('@'));
    const role = fromGroups ?? row.default_role;
    const id = randomUUID();
    await this.#queries.insertUser({
      id,
      account_id: accountId,
      email,
      name,
      role,
      password_hash: null,
      totp_secret: null,
      totp_enabled_at: null,
      sso_subject: subject,
      created_at: now,
      updated_at: now,
      last_sign_in_at: now,
    });
    return { userId: id, accountId, accountName, name, email, role };
  }

  #providerOf(row: SsoSettingsRow) {
    return {
      issuer: row.issuer,
      clientId: row.client_id,
      clientSecret: this.#box.open(row.client_secret, secretAad(row.account_id)),
    };
  }
}

/** The stored group → role mapping, roles checked (an unknown value is left out). */
function groupRolesOf(row: SsoSettingsRow): Record<string, Role> {
  const parsed = JSON.parse(row.group_roles) as Record<string, unknown>;
  const out: Record<string, Role> = {};
  for (const [group, role] of Object.entries(parsed)) if (isRole(role)) out[group] = role;
  return out;
}
