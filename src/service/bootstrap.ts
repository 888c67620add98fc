import { randomBytes } from 'node:crypto';
import { hostname, networkInterfaces } from 'node:os';
import type { Kysely } from 'kysely';
import type { CheckType } from '../protocol/index.js';
import { bodyAjv } from './platform/http/validation.js';
import { createAccount, createApiKey, generateApiKey, hashApiKey } from './platform/http/auth.js';
import { type CheckDoc, newCheckDoc, presentCheck } from './checks/checks.js';
import { CheckQueries } from './checks/store.js';
import { checkTypeEntry } from './checks/types/registry.js';
import { CheckResponseSchema } from './checks/responses.js';
import type { Database } from './platform/store/database.js';
import { underStoreLock } from './platform/store/dialect.js';
import { AccountQueries } from './platform/store/accounts.js';
import { EMBEDDED_LOCATION_SLUG, PrivateLocations } from './resources/private-locations/private-locations.js';
import { Users } from './users/index.js';

/**
 * What bootstrapping found or made. `createdApiKey` is set only when it was created now (shown once), and
 * `createdAdmin` only when the first person was (their generated password shown once).
 */
export type Bootstrap = {
  accountId: string;
  createdApiKey: string | null;
  createdAdmin: { email: string; password: string } | null;
};

/** Options of {@link ensureAccount}. */
export type BootstrapOptions = {
  accountId?: string | undefined;
  apiKey?: string | undefined;
  /** Email of the first person, an OWNER (OUTPOST_ADMIN_EMAIL); default admin@localhost. */
  adminEmail?: string | undefined;
};

/**
 * A generated password: 18 random bytes as base64url (24 characters, 144 bits), within the 12–128
 * characters a password must have (docs/teams.md, "Passwords").
 */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * On an empty store, creates the first account, its API key (from OUTPOST_ACCOUNT_ID / OUTPOST_API_KEY when
 * given) and its first person, an OWNER with a generated password (docs/teams.md, "The first person and the command line").
 * Otherwise returns the oldest account.
 */
export async function ensureAccount(db: Kysely<Database>, options: BootstrapOptions): Promise<Bootstrap> {
  // Replicas starting together on an empty PostgreSQL store: one makes the account, the others wait
  // for it and then find it.
  return underStoreLock(db, BOOTSTRAP_LOCK_ID, (tx) => ensureAccountIn(tx, options));
}

/** The advisory lock of {@link ensureAccount} on PostgreSQL (any constant no other lock of the store uses). */
const BOOTSTRAP_LOCK_ID = 7_305_011_872;

async function ensureAccountIn(db: Kysely<Database>, options: BootstrapOptions): Promise<Bootstrap> {
  const accounts = new AccountQueries(db);
  const existing = await accounts.oldestId();
  if (existing !== undefined) {
    if (options.apiKey) {
      // A key given in the environment is honoured on an existing store too.
      const known = await accounts.accountOfKey(hashApiKey(options.apiKey));
      if (known === undefined) await createApiKey(db, existing, options.apiKey);
    }
    return { accountId: existing, createdApiKey: null, createdAdmin: null };
  }
  const accountId = await createAccount(db, 'default', options.accountId);
  const key = await createApiKey(db, accountId, options.apiKey ?? generateApiKey());
  const password = generatePassword();
  const admin = await new Users(db).create(
    accountId,
    { email: options.adminEmail ?? 'admin@localhost', name: 'Admin', role: 'OWNER', password },
    Date.now(),
  );
  return {
    accountId,
    createdApiKey: options.apiKey ? null : key,
    createdAdmin: { email: admin.email, password },
  };
}

/**
 * The key of the agent `outpost up` starts: a key of the private location `local` (named after this host,
 * created on the first start), fresh at every start with the previous one revoked, so no agent key is ever
 * stored in clear. The embedded agent serves that location only: a check runs on the service's machine
 * only when it names `local` (docs/protocol.md, "Run locations"). Account keys earlier versions gave
 * the embedded agent (label `embedded-agent`) are revoked.
 * @returns the key in clear (`pl_…`).
 */
export async function rotateEmbeddedAgentKey(db: Kysely<Database>, accountId: string): Promise<string> {
  await new AccountQueries(db).deleteKeysLabelled(accountId, 'embedded-agent');
  return new PrivateLocations(db).ensureEmbedded(accountId, hostname(), Date.now());
}

/** The check response schema's validator, compiled when a check is first seeded (170 ms: not at every start). */
let checkResponseValidator: ReturnType<typeof bodyAjv.compile> | undefined;

/**
 * Builds the stored document of a check the service makes itself through the API's create path:
 * the body is validated by the type's create schema (its registry entry, check-types.ts), which
 * fills its defaults (`muted`, `doubleCheck`, thresholds, …) exactly as `POST /v1/checks/{type}`
 * does; then `newCheckDoc`; then the document as `GET /v1/checks/{id}` would show it must pass the
 * check response schema.
 * @throws Error naming the check type and the failing field when the type is not accepted or the
 *   body or the resulting document is invalid (a bug).
 */
export function seededCheckDoc(checkType: CheckType, body: Record<string, unknown>, now: Date): CheckDoc {
  const validate = bodyAjv.compile(checkTypeEntry(checkType).createBody);
  const created = structuredClone(body);
  if (!validate(created)) {
    const e = validate.errors?.[0];
    throw new Error(`seeded ${checkType} check is invalid: body${e?.instancePath ?? ''} ${e?.message ?? ''}`);
  }
  const doc = newCheckDoc(checkType, created, now);
  checkResponseValidator ??= bodyAjv.compile(CheckResponseSchema);
  if (!checkResponseValidator(presentCheck(doc))) {
    const e = checkResponseValidator.errors?.[0];
    throw new Error(
      `seeded ${checkType} check fails the response schema: ${e?.instancePath ?? ''} ${e?.message ?? ''}`,
    );
  }
  return doc;
}

/**
 * Moves the demo checks an earlier version seeded in `us-east-1` (its default location, served then by the
 * embedded agent) to `local`, where the embedded agent runs them now: only checks tagged `demo`, named
 * `Demo: …`, and placed in exactly `us-east-1` with no private location, so a check the user placed is left
 * alone.
 */
async function moveDemoChecksHome(store: CheckQueries, accountId: string, checks: CheckDoc[]): Promise<void> {
  const now = Date.now();
  for (const check of checks) {
    const seeded =
      check.tags.includes('demo') &&
      check.name.startsWith('Demo: ') &&
      check.locations?.length === 1 &&
      check.locations[0] === 'us-east-1' &&
      (check.privateLocations ?? []).length === 0;
    if (!seeded) continue;
    const moved: CheckDoc = {
      ...check,
      locations: [],
      privateLocations: [EMBEDDED_LOCATION_SLUG],
      updated_at: new Date(now).toISOString(),
    };
    await store.update(accountId, check, moved, now);
  }
}

/** True when the host has IPv6 on loopback (::1). */
function hasIpv6Loopback(): boolean {
  return Object.values(networkInterfaces()).some((list) =>
    list?.some((a) => a.family === 'IPv6' && a.address === '::1'),
  );
}

/**
 * Seeds demo checks when the account has none, every minute, in location `local` (the embedded agent's), so
 * a newcomer sees real results at once (first runs are immediate): ICMP pings of loopback and, with `serviceUrl`, an API check
 * of this service's own OpenAPI document with three assertions.
 * @returns names of the seeded checks.
 */
export async function seedDemoChecks(
  db: Kysely<Database>,
  accountId: string,
  options: { serviceUrl?: string } = {},
): Promise<string[]> {
  const store = new CheckQueries(db);
  const existing = await store.list(accountId);
  if (existing.length > 0) {
    await moveDemoChecksHome(store, accountId, existing);
    return [];
  }
  const demos = [
    { name: 'Demo: ping 127.0.0.1', request: { hostname: '127.0.0.1', ipFamily: 'IPv4', pingCount: 5 } },
    { name: 'Demo: ping localhost', request: { hostname: 'localhost', ipFamily: 'IPv4', pingCount: 5 } },
    ...(hasIpv6Loopback()
      ? [{ name: 'Demo: ping ::1', request: { hostname: '::1', ipFamily: 'IPv6', pingCount: 5 } }]
      : []),
  ];
  const now = new Date();
  // Run by the embedded agent, on this machine: the location it serves.
  const onThisMachine = { locations: [], privateLocations: [EMBEDDED_LOCATION_SLUG] };
  for (const demo of demos) {
    const doc = seededCheckDoc(
      'ICMP',
      {
        name: demo.name,
        activated: true,
        frequency: 1,
        tags: ['demo'],
        ...onThisMachine,
        request: {
          ...demo.request,
          assertions: [{ source: 'LATENCY', property: 'avg', comparison: 'LESS_THAN', target: '100' }],
        },
        heartbeat: {},
        script: '',
        degradedResponseTime: 10_000,
        maxResponseTime: 20_000,
        degradedPacketLossThreshold: 10,
        maxPacketLossThreshold: 20,
      },
      now,
    );
    await store.insert(accountId, doc, now.getTime());
  }
  const names = demos.map((d) => d.name);
  if (options.serviceUrl) {
    const name = 'Demo: API GET /openapi.json';
    const doc = seededCheckDoc(
      'API',
      {
        name,
        activated: true,
        frequency: 1,
        tags: ['demo'],
        ...onThisMachine,
        doubleCheck: false,
        // The create schema's defaults fill the rest: the same ones POST /v1/checks/api applies.
        request: {
          url: `${options.serviceUrl}/openapi.json`,
          assertions: [
            { source: 'STATUS_CODE', property: '', comparison: 'EQUALS', target: '200', regex: null },
            {
              source: 'JSON_BODY',
              property: '$.openapi',
              comparison: 'CONTAINS',
              target: '3.1',
              regex: null,
            },
            { source: 'RESPONSE_TIME', property: '', comparison: 'LESS_THAN', target: '1000', regex: null },
          ],
        },
        degradedResponseTime: 10_000,
        maxResponseTime: 20_000,
      },
      now,
    );
    await store.insert(accountId, doc, now.getTime());
    names.push(name);
  }
  return names;
}
