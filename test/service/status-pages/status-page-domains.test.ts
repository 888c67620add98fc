/**
 * Custom domains of status pages must be verified (docs/status-pages.md, "Custom domains"): a domain serves
 * its page only once its TXT record `_outpost-challenge.{domain}` holds the page's token (checked against a
 * real DNS server on loopback), or the operator's allow-list covers it; a domain another page holds verified
 * stays with it; the service's own host names are refused; a request to a pending domain gets the web app.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Answer } from 'dns-packet';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, type BuildOptions, type Service } from '../../../src/service/app.js';
import { parseDnsServers, parseDomainAllowList } from '../../../src/service/config.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import {
  CustomDomainPolicy,
  reconcileCustomDomains,
} from '../../../src/service/status-pages/admin/custom-domains.js';
import type { Database } from '../../../src/service/platform/store/database.js';
import { type ScriptedDnsServer, startScriptedDnsServer } from '../../helpers/dns-servers.js';
import { testStore } from '../../helpers/service.js';

const APP_URL = 'https://outpost.example.net';
const WEB_APP_MARKER = 'Outpost web app (test build)';
const INDEX = `<!doctype html><html lang="en"><head><title>${WEB_APP_MARKER}</title></head><body><div id="app"></div></body></html>\n`;

/** TXT records the loopback DNS server answers, by lower-case name; each record a list of strings. */
const txt = new Map<string, string[][]>();
/** Names the server never answers (the lookup times out). */
const silent = new Set<string>();
let dns: ScriptedDnsServer;
let appDir: string;

/** A service on its own store (`testStore`) with two accounts, asking the loopback DNS server. */
type Svc = {
  service: Service;
  db: Kysely<Database>;
  request(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    body?: unknown,
    account?: 'A' | 'B',
  ): Promise<{ statusCode: number; json(): any; body: string }>;
  /** GET `path` with `Host: host`. */
  onHost(host: string, path?: string): Promise<{ statusCode: number; body: string }>;
  close(): Promise<void>;
};

async function makeService(customDomains: BuildOptions['customDomains'] = {}): Promise<Svc> {
  const store = await testStore();
  const db = store.db;
  const keys = {
    A: await createApiKey(db, await createAccount(db, 'A')),
    B: await createApiKey(db, await createAccount(db, 'B')),
  };
  const service = await build({
    db,
    log: pino({ level: 'silent' }),
    retention: false,
    appDir,
    appUrl: APP_URL,
    customDomains: { dnsServers: [`127.0.0.1:${dns.port}`], lookupTimeoutMs: 1500, ...customDomains },
  });
  return {
    service,
    db,
    request: (method, url, body, account = 'A') =>
      service.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${keys[account]}` },
        ...(body === undefined ? {} : { payload: body as object }),
      }),
    onHost: (host, path = '/') => service.app.inject({ url: path, headers: { host } }),
    close: async () => {
      await service.close();
      await store.drop();
    },
  };
}

let seq = 0;
const freshUrl = () => `domains-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

/** Creates a page (201 expected) named `name` with `customDomain` as account `account`. */
async function createPage(svc: Svc, name: string, customDomain: string | null, account: 'A' | 'B' = 'A') {
  const res = await svc.request(
    'POST',
    '/v1/status-pages',
    { name, url: freshUrl(), cards: [], customDomain },
    account,
  );
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as {
    id: string;
    url: string;
    customDomainStatus: string | null;
    customDomainVerification: { type: string; name: string; value: string } | null;
    [field: string]: unknown;
  };
}

const verify = (svc: Svc, id: string, account: 'A' | 'B' = 'A') =>
  svc.request('POST', `/v1/status-pages/${id}/custom-domain/verify`, undefined, account);

/** The TXT queries the DNS server received for `name`. */
const queriesFor = (name: string) =>
  dns.queries.filter((q) =>
    q.packet.questions?.some((x) => x.type === 'TXT' && x.name.toLowerCase() === name),
  ).length;

beforeAll(async () => {
  appDir = mkdtempSync(join(tmpdir(), 'outpost-domains-app-'));
  writeFileSync(join(appDir, 'index.html'), INDEX);
  dns = await startScriptedDnsServer((query) => {
    const question = query.questions?.[0];
    const name = question?.name.toLowerCase() ?? '';
    if (silent.has(name)) return { silent: true };
    const records = question?.type === 'TXT' ? txt.get(name) : undefined;
    if (!records) return { rcode: 3 };
    const answers: Answer[] = records.map((data) => ({ type: 'TXT', name, ttl: 60, data }));
    return { answers };
  });
});

afterAll(async () => {
  await dns?.close();
  rmSync(appDir, { recursive: true, force: true });
});

describe('verification by a DNS TXT record', () => {
  let svc: Svc;
  beforeAll(async () => {
    svc = await makeService();
  });
  afterAll(async () => svc.close());

  it('a pending domain gets the web app; after the TXT record and verify, the page', async () => {
    const domain = 'status.acme-one.test';
    const page = await createPage(svc, 'Acme One Status', 'Status.Acme-One.test');
    expect(page).toMatchObject({
      customDomain: 'Status.Acme-One.test',
      customDomainStatus: 'PENDING',
      customDomainVerifiedAt: null,
      customDomainVerifiedBy: null,
      customDomainCheckedAt: null,
      customDomainProblem: null,
    });
    const record = page.customDomainVerification!;
    expect(record.type).toBe('TXT');
    expect(record.name).toBe(`_outpost-challenge.${domain}`);
    expect(record.value).toMatch(/^outpost-verify=[0-9a-f]{32}$/);

    // Pending: the Host gets the service's web app, never the page.
    const home = await svc.onHost(domain);
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain(WEB_APP_MARKER);
    expect(home.body).not.toContain('Acme One Status');
    // A page's path on the domain is the service's own 404 (an API route not found), not the page's view.
    const history = await svc.onHost(domain, '/history');
    expect(history.statusCode).toBe(404);
    expect(history.body).toContain('OUTPOST_ERR_NOT_FOUND');
    expect(history.body).not.toContain('Acme One Status');
    // The page itself is still at /status/{url}.
    expect((await svc.onHost('outpost.example.net', `/status/${page.url}`)).body).toContain(
      'Acme One Status',
    );

    // No record yet.
    const before = queriesFor(record.name);
    const none = await verify(svc, page.id);
    expect(none.statusCode, none.body).toBe(200);
    expect(none.json()).toMatchObject({ customDomainStatus: 'PENDING', customDomainVerifiedAt: null });
    expect(none.json().customDomainProblem).toBe(
      `no TXT record at ${record.name}: add one with the text ${record.value}`,
    );
    expect(none.json().customDomainCheckedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(queriesFor(record.name)).toBeGreaterThan(before);

    // A record with another token does not do.
    txt.set(record.name, [['outpost-verify=0123456789abcdef0123456789abcdef'], ['v=spf1 -all']]);
    const wrong = await verify(svc, page.id);
    expect(wrong.json()).toMatchObject({ customDomainStatus: 'PENDING' });
    expect(wrong.json().customDomainProblem).toBe(
      `the TXT records at ${record.name} do not include ${record.value}`,
    );
    expect((await svc.onHost(domain)).body).toContain(WEB_APP_MARKER);

    // The right one, split in two strings as some DNS hosts store it, among others.
    const [head, tail] = [record.value.slice(0, 20), record.value.slice(20)];
    txt.set(record.name, [['v=spf1 -all'], [head, tail]]);
    const ok = await verify(svc, page.id);
    expect(ok.json()).toMatchObject({
      customDomainStatus: 'VERIFIED',
      customDomainVerifiedBy: 'TXT',
      customDomainProblem: null,
      customDomainVerification: record,
    });
    expect(ok.json().customDomainVerifiedAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    // Served at the domain's root at once (any case, any port), with links without /status/{url}.
    for (const host of [domain, 'STATUS.acme-one.test:443']) {
      const home = await svc.onHost(host);
      expect(home.statusCode, host).toBe(200);
      expect(home.body, host).toContain('Acme One Status');
      expect(home.body, host).not.toContain(WEB_APP_MARKER);
      expect(home.body, host).toContain('href="/history"');
    }
    expect((await svc.request('GET', `/v1/status-pages/${page.id}`)).json()).toMatchObject({
      customDomainStatus: 'VERIFIED',
    });
    // Verifying again changes nothing, and asks no DNS server.
    const queries = queriesFor(record.name);
    expect((await verify(svc, page.id)).json()).toMatchObject({ customDomainStatus: 'VERIFIED' });
    expect(queriesFor(record.name)).toBe(queries);

    // An unchanged domain keeps its state through a PUT; a new one starts pending and the old one is free.
    const put = (customDomain: string | null) =>
      svc.request('PUT', `/v1/status-pages/${page.id}`, {
        name: 'Acme One Status',
        url: page.url,
        cards: [],
        customDomain,
      });
    expect((await put('status.acme-one.test')).json()).toMatchObject({ customDomainStatus: 'VERIFIED' });
    const moved = (await put('www.acme-one.test')).json();
    expect(moved).toMatchObject({ customDomainStatus: 'PENDING', customDomainVerifiedAt: null });
    expect(moved.customDomainVerification.name).toBe('_outpost-challenge.www.acme-one.test');
    expect((await svc.onHost(domain)).body).toContain(WEB_APP_MARKER);
    expect((await svc.onHost('www.acme-one.test')).body).toContain(WEB_APP_MARKER);
    const cleared = (await put(null)).json();
    expect(cleared).toMatchObject({
      customDomain: null,
      customDomainStatus: null,
      customDomainVerification: null,
      customDomainProblem: null,
    });
  });

  it('a second account cannot take over a verified domain', async () => {
    const domain = 'status.acme-two.test';
    const owner = await createPage(svc, 'Acme Two Status', domain, 'A');
    const name = owner.customDomainVerification!.name;
    txt.set(name, [[owner.customDomainVerification!.value]]);
    expect((await verify(svc, owner.id, 'A')).json()).toMatchObject({ customDomainStatus: 'VERIFIED' });

    // Another account may set the domain, with a token of its own, but it stays pending.
    const squatter = await createPage(svc, 'Squatter Status', 'STATUS.acme-two.test', 'B');
    expect(squatter.customDomainStatus).toBe('PENDING');
    expect(squatter.customDomainVerification!.name).toBe(name);
    expect(squatter.customDomainVerification!.value).not.toBe(owner.customDomainVerification!.value);
    // Even with its own record published next to the owner's, it cannot be verified while the owner holds it.
    txt.set(name, [[owner.customDomainVerification!.value], [squatter.customDomainVerification!.value]]);
    const refused = await verify(svc, squatter.id, 'B');
    expect(refused.statusCode).toBe(200);
    expect(refused.json()).toMatchObject({ customDomainStatus: 'PENDING', customDomainVerifiedAt: null });
    expect(refused.json().customDomainProblem).toMatch(/another status page serves status\.acme-two\.test/);
    // Nor with the owner's record (its token is the owner's account's), nor through a refresh.
    await svc.service.context.statusPageDomains.refresh(Date.now() + 3_600_000);
    const home = await svc.onHost(domain);
    expect(home.body).toContain('Acme Two Status');
    expect(home.body).not.toContain('Squatter Status');
    // The owner's account may not be reached through the other account's API either.
    expect((await verify(svc, owner.id, 'B')).statusCode).toBe(404);

    // Once the owner gives the domain up, the other page can be verified with its own record.
    expect(
      (
        await svc.request('PUT', `/v1/status-pages/${owner.id}`, {
          name: 'Acme Two Status',
          url: owner.url,
          cards: [],
          customDomain: null,
        })
      ).statusCode,
    ).toBe(200);
    expect((await svc.onHost(domain)).body).toContain(WEB_APP_MARKER);
    expect((await verify(svc, squatter.id, 'B')).json()).toMatchObject({ customDomainStatus: 'VERIFIED' });
    expect((await svc.onHost(domain)).body).toContain('Squatter Status');
  });

  it('the token is one per account and domain: another page of the same account gets the same record', async () => {
    const first = await createPage(svc, 'Acme Three', 'status.acme-three.test');
    const second = await createPage(svc, 'Acme Three bis', 'status.acme-three.test');
    expect(second.customDomainVerification).toEqual(first.customDomainVerification);
    const other = await createPage(svc, 'Acme Three other', 'status.acme-three.test', 'B');
    expect(other.customDomainVerification!.value).not.toBe(first.customDomainVerification!.value);
  });

  it('refuses the service’s own host names with 400 naming customDomain', async () => {
    const page = await createPage(svc, 'Own host', null);
    for (const customDomain of ['outpost.example.net', 'OUTPOST.Example.NET', 'app.localhost', 'localhost']) {
      const created = await svc.request('POST', '/v1/status-pages', {
        name: 'x',
        url: freshUrl(),
        cards: [],
        customDomain,
      });
      expect(created.statusCode, customDomain).toBe(400);
      expect(created.json().attributes, customDomain).toMatchObject({ field: 'customDomain', in: 'body' });
      const updated = await svc.request('PUT', `/v1/status-pages/${page.id}`, {
        name: 'x',
        url: page.url,
        cards: [],
        customDomain,
      });
      expect(updated.statusCode, customDomain).toBe(400);
      expect(updated.json().attributes, customDomain).toMatchObject({ field: 'customDomain' });
    }
    // A row stored before the rule (straight into the store) never verifies, and the service's host keeps
    // serving the web app.
    await svc.db
      .updateTable('status_pages')
      .set({ custom_domain: 'outpost.example.net' })
      .where('id', '=', page.id)
      .execute();
    const checked = await verify(svc, page.id);
    expect(checked.json()).toMatchObject({ customDomainStatus: 'PENDING' });
    expect(checked.json().customDomainProblem).toMatch(/host name of this service/);
    expect((await svc.onHost('outpost.example.net')).body).toContain(WEB_APP_MARKER);
  });

  it('answers 400 for a page without a custom domain and 404 for an unknown page', async () => {
    const page = await createPage(svc, 'No domain', null);
    const res = await verify(svc, page.id);
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toMatchObject({ field: 'id', in: 'params', rule: 'customDomain' });
    expect((await verify(svc, 'no-such-page')).statusCode).toBe(404);
  });

  it('says so when the DNS lookup times out, within the lookup timeout', async () => {
    const page = await createPage(svc, 'Slow DNS', 'status.slow-dns.test');
    silent.add(page.customDomainVerification!.name);
    const started = performance.now();
    const res = await verify(svc, page.id);
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(res.json()).toMatchObject({ customDomainStatus: 'PENDING' });
    expect(res.json().customDomainProblem).toBe(
      `the DNS lookup of ${page.customDomainVerification!.name} timed out`,
    );
  });

  it('the periodic refresh checks pending domains again once they are due', async () => {
    const page = await createPage(svc, 'Refreshed Status', 'status.acme-refresh.test');
    const { name, value } = page.customDomainVerification!;
    const domains = svc.service.context.statusPageDomains;
    const now = Date.now();
    await domains.refresh(now);
    expect(queriesFor(name)).toBe(1);
    expect((await svc.request('GET', `/v1/status-pages/${page.id}`)).json().customDomainProblem).toMatch(
      /no TXT record/,
    );

    txt.set(name, [[value]]);
    // Checked a minute ago: not due again before 5 minutes.
    await domains.refresh(now + 60_000);
    expect(queriesFor(name)).toBe(1);
    expect((await svc.onHost('status.acme-refresh.test')).body).toContain(WEB_APP_MARKER);
    await domains.refresh(now + 300_000);
    expect(queriesFor(name)).toBe(2);
    expect((await svc.request('GET', `/v1/status-pages/${page.id}`)).json()).toMatchObject({
      customDomainStatus: 'VERIFIED',
      customDomainVerifiedBy: 'TXT',
    });
    expect((await svc.onHost('status.acme-refresh.test')).body).toContain('Refreshed Status');
  });
});

describe('the operator’s allow-list', () => {
  let svc: Svc;
  beforeAll(async () => {
    svc = await makeService({ allowList: parseDomainAllowList('.status.example.com, pages.example.org')! });
  });
  afterAll(async () => svc.close());

  it('makes a covered domain active without a TXT record', async () => {
    const page = await createPage(svc, 'Allowed Status', 'acme.status.example.com');
    expect(page).toMatchObject({ customDomainStatus: 'VERIFIED', customDomainVerifiedBy: 'ALLOW_LIST' });
    expect(queriesFor('_outpost-challenge.acme.status.example.com')).toBe(0);
    expect((await svc.onHost('acme.status.example.com')).body).toContain('Allowed Status');
    const exact = await createPage(svc, 'Exact Status', 'pages.example.org');
    expect(exact.customDomainStatus).toBe('VERIFIED');

    // Not covered: the suffix itself, a name under an exact entry, a look-alike.
    for (const domain of [
      'status.example.com',
      'x.pages.example.org',
      'acme.status.example.com.evil.test',
      'evilstatus.example.com',
    ]) {
      const other = await createPage(svc, `Other ${domain}`, domain);
      expect(other.customDomainStatus, domain).toBe('PENDING');
      expect((await svc.onHost(domain)).body, domain).toContain(WEB_APP_MARKER);
    }

    // First come, first served within the allow-list: a second page stays pending.
    const second = await createPage(svc, 'Second Status', 'ACME.status.example.com', 'B');
    expect(second.customDomainStatus).toBe('PENDING');
    expect(second.customDomainProblem).toMatch(/another status page serves/);
    expect((await svc.onHost('acme.status.example.com')).body).toContain('Allowed Status');
  });

  it('at start, undoes allow-list verifications the list no longer covers and makes covered ones active', async () => {
    const page = await createPage(svc, 'Reconciled Status', 'team.status.example.com');
    expect(page.customDomainStatus).toBe('VERIFIED');
    const pending = await createPage(svc, 'Later Status', 'later.example.net');
    expect(pending.customDomainStatus).toBe('PENDING');

    // A restart with another allow-list.
    const changed = await reconcileCustomDomains(
      svc.db,
      new CustomDomainPolicy({
        appUrl: APP_URL,
        allowList: ['.example.net'],
        dnsServers: [`127.0.0.1:${dns.port}`],
      }),
      Date.now(),
    );
    expect(changed).toBeGreaterThanOrEqual(2);
    const after = (await svc.request('GET', `/v1/status-pages/${page.id}`)).json();
    expect(after).toMatchObject({ customDomainStatus: 'PENDING', customDomainVerifiedBy: null });
    expect(after.customDomainProblem).toMatch(/no longer covered by the allow-list/);
    expect((await svc.request('GET', `/v1/status-pages/${pending.id}`)).json()).toMatchObject({
      customDomainStatus: 'VERIFIED',
      customDomainVerifiedBy: 'ALLOW_LIST',
    });
  });
});

describe('configuration', () => {
  it('parses the allow-list and the DNS servers, refusing what is neither', () => {
    expect(parseDomainAllowList('.A.example, b.example.,')).toEqual(['.a.example', 'b.example']);
    for (const bad of ['.', 'https://a.example', 'a..example', '-a.example', '*.a.example']) {
      expect(parseDomainAllowList(bad), bad).toBeNull();
    }
    expect(parseDnsServers('127.0.0.1:5353, ::1, [::1]:53')).toEqual(['127.0.0.1:5353', '::1', '[::1]:53']);
    for (const bad of ['', 'dns.example', '127.0.0.1:0', '127.0.0.1:70000', '[127.0.0.1]:53', '::1:53x']) {
      expect(parseDnsServers(bad), bad).toBeNull();
    }
  });
});
