/**
 * Email subscriptions of public status pages (docs/status-pages.md, "Subscriptions"), in process with a
 * real SMTP peer: the double opt-in (one confirmation mail, confirmed by a POST from the page its link
 * shows), mail per incident update with notifySubscribers only to confirmed subscribers of the affected
 * services, RFC 8058 one-click unsubscribe from the received mail's header, no enumeration, signed links,
 * the API, and one update fanned out to 300 subscribers (the 1,000-subscriber timing is the benchmark's).
 */
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageIdOf } from '../../../src/service/alerting/channels/email.js';
import { incidentForAlert } from '../../../src/service/status-pages/incidents/trigger.js';
import type { EngineAlert } from '../../../src/service/alerting/types.js';
import type { CheckDoc } from '../../../src/service/checks/checks.js';
import { build, type Service } from '../../../src/service/app.js';
import { createAccount, createApiKey } from '../../../src/service/platform/http/auth.js';
import { subscriberToken } from '../../../src/service/status-pages/admin/subscribers.js';
import { type ReceivedMail, type SmtpPeer, startSmtpPeer } from '../../helpers/alert-peers.js';
import { testStore } from '../../helpers/service.js';

const APP_URL = 'https://outpost.example.test';

let service: Service;
let store: Awaited<ReturnType<typeof testStore>>;
let db: typeof store.db;
let peer: SmtpPeer;
const keys: Record<'A' | 'B', string> = { A: '', B: '' };
let ipCounter = 1;

beforeAll(async () => {
  peer = await startSmtpPeer();
  store = await testStore();
  db = store.db;
  keys.A = await createApiKey(db, await createAccount(db, 'A'));
  keys.B = await createApiKey(db, await createAccount(db, 'B'));
  service = await build({
    db,
    log: pino({ level: 'silent' }),
    retention: false,
    alerting: {
      providers: {
        smtp: { url: peer.url, from: 'status@example.test' },
        pagerdutyUrl: 'http://127.0.0.1:9',
        opsgenieUrl: { US: 'http://127.0.0.1:9', EU: 'http://127.0.0.1:9' },
      },
      delivery: { pollMs: 50, baseDelayMs: 20, maxDelayMs: 50, appUrl: APP_URL },
    },
  });
});

afterAll(async () => {
  await service?.close();
  await store?.drop();
  await peer?.close();
});

async function api(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
  account: 'A' | 'B' = 'A',
): Promise<LightMyRequestResponse> {
  return service.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${keys[account]}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

async function ok<T = any>(res: Promise<LightMyRequestResponse>, status = 200): Promise<T> {
  const r = await res;
  expect(r.statusCode, r.body).toBe(status);
  return (r.body ? r.json() : undefined) as T;
}

/** A keyless form POST from its own client address (the subscribe limit counts per address). */
function postForm(
  url: string,
  body: string,
  ip = `10.0.${Math.floor(ipCounter / 250)}.${(ipCounter++ % 250) + 1}`,
) {
  return service.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: body,
    remoteAddress: ip,
  });
}

async function until<T>(what: string, check: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const got = check();
    if (got !== undefined && got !== false) return got;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const mailsTo = (address: string): ReceivedMail[] => peer.mails.filter((m) => m.to.includes(address));

/** Every queued row settled (DELIVERED or FAILED): nothing more is on its way. */
async function settled(): Promise<void> {
  await until('notifications settled', () => true);
  const end = Date.now() + 10_000;
  for (;;) {
    const open = await db
      .selectFrom('alert_notifications')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('state', 'in', ['PENDING', 'SENDING'])
      .executeTakeFirstOrThrow();
    if (Number(open.n) === 0) return;
    if (Date.now() > end) throw new Error('notifications still open');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The path and query of the first link in `text` that contains `marker`. */
function linkIn(text: string, marker: string): string {
  const found = text.match(/https?:\/\/\S+/g)?.find((u) => u.includes(marker));
  expect(found, `a link with ${marker} in:\n${text}`).toBeDefined();
  const url = new URL(found!);
  expect(url.origin).toBe(APP_URL);
  return url.pathname + url.search;
}

type Setup = { pageId: string; url: string; serviceA: string; serviceB: string };

async function createPage(name: string, extra: Record<string, unknown> = {}): Promise<Setup> {
  const serviceA = (await ok(api('POST', '/v1/status-pages/services', { name: `${name} API` }), 201)).id;
  const serviceB = (await ok(api('POST', '/v1/status-pages/services', { name: `${name} Dashboard` }), 201))
    .id;
  const url = `${name.toLowerCase()}-${randomUUID().slice(0, 8)}`;
  const page = await ok(
    api('POST', '/v1/status-pages', {
      name: `${name} <Status> & "Co"`,
      url,
      cards: [{ name: 'Core', services: [{ id: serviceA }, { id: serviceB }] }],
      ...extra,
    }),
    201,
  );
  return { pageId: page.id, url, serviceA, serviceB };
}

/** Subscribes and returns the confirmation mail that arrives. */
async function subscribe(setup: Setup, email: string, services?: string[]): Promise<ReceivedMail> {
  const before = mailsTo(email.toLowerCase()).length;
  const body = services
    ? new URLSearchParams([
        ['email', email],
        ['all', '0'],
        ...services.map((s): [string, string] => ['services', s]),
      ])
    : new URLSearchParams({ email, all: '1' });
  const res = await postForm(`/status/${setup.url}/subscribe`, body.toString());
  expect(res.statusCode, res.body).toBe(200);
  expect(res.body).toContain('Check your inbox');
  return until(`confirmation to ${email}`, () => mailsTo(email.toLowerCase())[before]);
}

/** Subscribes and confirms through the mail's link (GET shows the button, POST confirms). */
async function subscribeConfirmed(setup: Setup, email: string, services?: string[]): Promise<void> {
  const mail = await subscribe(setup, email, services);
  const path = linkIn(mail.text!, '/subscribe/confirm?token=');
  expect((await service.app.inject({ method: 'POST', url: path })).statusCode).toBe(200);
}

describe('status page subscriptions', () => {
  let setup: Setup;
  beforeAll(async () => {
    setup = await createPage('Acme');
  });

  it('double opt-in: one confirmation mail; its link shows a button, the POST confirms; resubscribing sends no second one', async () => {
    const form = await service.app.inject({ method: 'GET', url: `/status/${setup.url}/subscribe` });
    expect(form.statusCode).toBe(200);
    expect(form.headers['content-type']).toContain('text/html');
    expect(form.body).toContain('<label for="email">Email address</label>');
    expect(form.body).toMatch(
      /<input type="checkbox" id="service-1" name="services" value="[^"]+"><label for="service-1">Acme API<\/label>/,
    );
    expect(form.body).toContain('Acme &lt;Status&gt; &amp; &quot;Co&quot;');
    expect(form.body).not.toContain('<Status>');
    expect(form.body.match(/<h1>/g)).toHaveLength(1);

    const mail = await subscribe(setup, 'Alice@Example.COM');
    expect(mail.to).toEqual(['alice@example.com']);
    expect(mail.subject).toBe('Confirm your subscription to Acme <Status> & "Co"');
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    expect(mail.headers['list-unsubscribe']).toMatch(
      /^<https:\/\/outpost\.example\.test\/status\/.+\/unsubscribe\?token=.+>$/,
    );
    expect(mail.html).toContain('Acme &lt;Status&gt; &amp; &quot;Co&quot;');
    const confirm = linkIn(mail.text!, '/subscribe/confirm?token=');

    let [row] = await ok<any[]>(api('GET', `/v1/status-pages/${setup.pageId}/subscribers`));
    expect(row).toMatchObject({
      email: 'alice@example.com',
      services: null,
      confirmed: false,
      confirmed_at: null,
    });

    // A GET (what a mail scanner prefetches) confirms nothing.
    const page = await service.app.inject({ method: 'GET', url: confirm });
    expect(page.statusCode).toBe(200);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).toMatch(
      /<form method="post" action="[^"]*\/subscribe\/confirm\?token(=|&#x3D;)[^"]+"><p><button type="submit">Confirm subscription<\/button>/,
    );
    [row] = await ok<any[]>(api('GET', `/v1/status-pages/${setup.pageId}/subscribers`));
    expect(row.confirmed).toBe(false);

    const action = /action="([^"]+)"/
      .exec(page.body.slice(page.body.indexOf('<main>')))![1]!
      .replaceAll('&#x3D;', '=')
      .replaceAll('&amp;', '&');
    const confirmed = await service.app.inject({ method: 'POST', url: action });
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.body).toContain('Subscription confirmed');
    [row] = await ok<any[]>(api('GET', `/v1/status-pages/${setup.pageId}/subscribers`));
    expect(row.confirmed).toBe(true);
    expect(row.confirmed_at).not.toBeNull();

    // Subscribing again (confirmed now) queues no confirmation.
    const again = await postForm(`/status/${setup.url}/subscribe`, 'email=alice%40example.com&all=1');
    expect(again.statusCode).toBe(200);
    await settled();
    expect(mailsTo('alice@example.com')).toHaveLength(1);
  });

  it('answers a new, an unconfirmed and a confirmed address with the same bytes; an unconfirmed one gets at most one confirmation per 10 minutes', async () => {
    const page = await createPage('Enum');
    const send = () =>
      postForm(`/status/${page.url}/subscribe`, 'email=enum%40example.com&all=1', '10.9.9.9');
    const strip = (r: LightMyRequestResponse) => {
      const { date: _date, ...headers } = r.headers;
      return { status: r.statusCode, headers, body: r.body };
    };
    const unknown = strip(await send());
    await until('confirmation', () => mailsTo('enum@example.com')[0]);
    const unconfirmed = strip(await send());
    await settled();
    expect(mailsTo('enum@example.com')).toHaveLength(1);
    expect(unconfirmed).toEqual(unknown);
    const mail = mailsTo('enum@example.com')[0]!;
    await service.app.inject({ method: 'POST', url: linkIn(mail.text!, '/subscribe/confirm?token=') });
    const confirmed = strip(await send());
    expect(confirmed).toEqual(unknown);
    await settled();
    expect(mailsTo('enum@example.com')).toHaveLength(1);
  });

  it('mails an update with notifySubscribers to confirmed subscribers of the affected services only; nothing without it, nothing for an edit', async () => {
    const page = await createPage('Filter');
    await subscribeConfirmed(page, 'only-a@example.com', [page.serviceA]);
    await subscribeConfirmed(page, 'only-b@example.com', [page.serviceB]);
    await subscribeConfirmed(page, 'whole@example.com');
    await subscribe(page, 'pending@example.com');
    await settled();
    const count = () => ({
      a: mailsTo('only-a@example.com').length,
      b: mailsTo('only-b@example.com').length,
      whole: mailsTo('whole@example.com').length,
      pending: mailsTo('pending@example.com').length,
    });
    expect(count()).toEqual({ a: 1, b: 1, whole: 1, pending: 1 });

    const name = '<script>alert(1)</script> "API" & co';
    const incidentA = await ok(
      api('POST', '/v1/incidents', {
        name,
        impact: 'MAJOR',
        services: [{ id: page.serviceA }],
        incidentUpdates: [
          { status: 'INVESTIGATING', description: 'Errors on <b>API</b>.', notifySubscribers: true },
        ],
      }),
      201,
    );
    await until('update mails on A', () => count().a === 2 && count().whole === 2);
    await settled();
    expect(count()).toEqual({ a: 2, b: 1, whole: 2, pending: 1 });
    const mail = mailsTo('only-a@example.com')[1]!;
    const [sub] = (await ok<any[]>(api('GET', `/v1/status-pages/${page.pageId}/subscribers`))).filter(
      (s) => s.email === 'only-a@example.com',
    );
    expect(mail.messageId).toBe(messageIdOf(`sp:${sub.id}:${incidentA.incidentUpdates[0].id}`));
    expect(mail.subject).toBe(`[Filter <Status> & "Co"] Investigating: ${name}`);
    expect(mail.text).toContain('Errors on <b>API</b>.');
    expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('Errors on &lt;b&gt;API&lt;/b&gt;.');
    expect(linkIn(mail.text!, '/incidents/')).toBe(`/status/${page.url}/incidents/${incidentA.id}`);
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');

    const incidentB = await ok(
      api('POST', '/v1/incidents', { name: 'Dashboard slow', services: [{ id: page.serviceB }] }),
      201,
    );
    await ok(
      api('POST', `/v1/incidents/${incidentB.id}/updates`, {
        status: 'IDENTIFIED',
        description: 'Found it.',
        notifySubscribers: true,
      }),
      201,
    );
    await until('update mails on B', () => count().b === 2 && count().whole === 3);
    await settled();
    expect(count()).toEqual({ a: 2, b: 2, whole: 3, pending: 1 });

    const queued = async () =>
      Number(
        (
          await db
            .selectFrom('alert_notifications')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await queued();
    await ok(
      api('POST', `/v1/incidents/${incidentB.id}/updates`, {
        status: 'MONITORING',
        description: 'Quiet update.',
      }),
      201,
    );
    await ok(api('PUT', `/v1/incidents/${incidentA.id}`, { name: 'Renamed', impact: 'MINOR' }));
    expect(await queued()).toBe(before);
    await new Promise((r) => setTimeout(r, 300));
    await settled();
    expect(count()).toEqual({ a: 2, b: 2, whole: 3, pending: 1 });

    // A RESOLVED update says so.
    await ok(
      api('POST', `/v1/incidents/${incidentA.id}/updates`, {
        status: 'RESOLVED',
        description: 'Fixed.',
        notifySubscribers: true,
      }),
      201,
    );
    await until('resolved mail', () => mailsTo('only-a@example.com')[2]);
    expect(mailsTo('only-a@example.com')[2]!.subject).toBe(`[Filter <Status> & "Co"] Resolved: Renamed`);
    await settled();
  });

  it('one-click unsubscribe: the POST of the mail header’s URL (no cookie) deletes the subscriber; no more mail', async () => {
    const page = await createPage('Leave');
    await subscribeConfirmed(page, 'leaver@example.com');
    await subscribeConfirmed(page, 'stayer@example.com');
    const first = await ok(
      api('POST', '/v1/incidents', {
        name: 'First',
        services: [{ id: page.serviceA }],
        incidentUpdates: [{ status: 'INVESTIGATING', description: 'One.', notifySubscribers: true }],
      }),
      201,
    );
    const mail = await until('update mail', () => mailsTo('leaver@example.com')[1]);
    const header = mail.headers['list-unsubscribe']!;
    const target = new URL(/^<(.+)>$/.exec(header)![1]!);
    expect(target.origin).toBe(APP_URL);
    const path = target.pathname + target.search;
    expect(mail.text).toContain(target.href);

    const shown = await service.app.inject({ method: 'GET', url: path });
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('<button type="submit">Unsubscribe</button>');
    expect((await ok<any[]>(api('GET', `/v1/status-pages/${page.pageId}/subscribers`))).length).toBe(2);

    const res = await service.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('You are unsubscribed');
    const left = await ok<any[]>(api('GET', `/v1/status-pages/${page.pageId}/subscribers`));
    expect(left.map((s) => s.email)).toEqual(['stayer@example.com']);
    // Again: still fine (a mail client may retry).
    expect((await service.app.inject({ method: 'POST', url: path, payload: '' })).statusCode).toBe(200);

    await ok(
      api('POST', `/v1/incidents/${first.id}/updates`, {
        status: 'RESOLVED',
        description: 'Two.',
        notifySubscribers: true,
      }),
      201,
    );
    await until('stayer gets the second update', () => mailsTo('stayer@example.com')[2]);
    await settled();
    expect(mailsTo('leaver@example.com')).toHaveLength(2);
  });

  it('refuses tampered, expired and other-purpose tokens; a private page answers the shared 404 for anything without a valid token', async () => {
    const page = await createPage('Tokens');
    const mail = await subscribe(page, 'tokens@example.com');
    const confirm = linkIn(mail.text!, '/subscribe/confirm?token=');
    const unsubscribe = new URL(/^<(.+)>$/.exec(mail.headers['list-unsubscribe']!)![1]!);
    const token = new URL(confirm, APP_URL).searchParams.get('token')!;
    const tampered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    const [sub] = await ok<any[]>(api('GET', `/v1/status-pages/${page.pageId}/subscribers`));
    const expired = subscriberToken(db, 'confirm', page.pageId, sub.id, Date.now() - 1000);
    const otherPage = await createPage('Other');
    const foreign = subscriberToken(db, 'confirm', otherPage.pageId, sub.id, Date.now() + 60_000);
    const base = `/status/${page.url}/subscribe/confirm?token=`;
    for (const bad of [tampered, expired, foreign, unsubscribe.searchParams.get('token')!, 'nonsense', '']) {
      const get = await service.app.inject({ method: 'GET', url: base + encodeURIComponent(bad) });
      expect(get.statusCode, bad).toBe(400);
      expect(get.body).toContain('This link does not work');
      const post = await service.app.inject({ method: 'POST', url: base + encodeURIComponent(bad) });
      expect(post.statusCode, bad).toBe(400);
    }
    expect((await ok<any[]>(api('GET', `/v1/status-pages/${page.pageId}/subscribers`)))[0].confirmed).toBe(
      false,
    );
    const unsubscribeWithConfirm = await service.app.inject({
      method: 'POST',
      url: `/status/${page.url}/unsubscribe?token=${encodeURIComponent(token)}`,
    });
    expect(unsubscribeWithConfirm.statusCode).toBe(400);
    expect(await ok<any[]>(api('GET', `/v1/status-pages/${page.pageId}/subscribers`))).toHaveLength(1);

    // A private page: every subscription path without a valid token is the unknown page's 404.
    const hidden = await createPage('Hidden', { isPrivate: true });
    const unknown = await service.app.inject({ method: 'GET', url: '/status/no-such-page-here/subscribe' });
    expect(unknown.statusCode).toBe(404);
    const same = (r: LightMyRequestResponse) => {
      const { date: _d, ...headers } = r.headers;
      return { status: r.statusCode, headers, body: r.body };
    };
    for (const res of [
      await service.app.inject({ method: 'GET', url: `/status/${hidden.url}/subscribe` }),
      await postForm(`/status/${hidden.url}/subscribe`, 'email=x%40example.com&all=1'),
      await service.app.inject({
        method: 'GET',
        url: `/status/${hidden.url}/subscribe/confirm?token=${tampered}`,
      }),
      await service.app.inject({ method: 'POST', url: `/status/${hidden.url}/unsubscribe?token=x` }),
      await service.app.inject({ method: 'GET', url: `/status/${hidden.url}/unsubscribe` }),
    ]) {
      expect(same(res)).toEqual(same(unknown));
      expect(res.body).not.toContain('Hidden');
    }
    expect(await ok<any[]>(api('GET', `/v1/status-pages/${hidden.pageId}/subscribers`))).toEqual([]);
  });

  it('validates the address next to its field; limits subscribe requests per client address', async () => {
    const page = await createPage('Valid');
    for (const email of [
      '',
      'no-at-sign',
      'a@b',
      'two@@example.com',
      'spaces in@example.com',
      `${'x'.repeat(250)}@example.com`,
    ]) {
      const res = await postForm(
        `/status/${page.url}/subscribe`,
        new URLSearchParams({ email, all: '1' }).toString(),
      );
      expect(res.statusCode, email).toBe(400);
      expect(res.body).toMatch(
        /<p class="error" id="email-error">Enter [^<]+<\/p>\n<input type="email" id="email"[^>]* aria-invalid="true" aria-describedby="email-error">/,
      );
      expect(res.body).toContain('<title>Error: ');
    }
    const none = await postForm(`/status/${page.url}/subscribe`, 'email=ok%40example.com&all=0');
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('Choose at least one service, or All services.');
    // Another page's service id is not offered: refused as none chosen.
    const foreign = await postForm(
      `/status/${page.url}/subscribe`,
      `email=ok%40example.com&all=0&services=${setup.serviceA}`,
    );
    expect(foreign.statusCode).toBe(400);
    expect(await ok<any[]>(api('GET', `/v1/status-pages/${page.pageId}/subscribers`))).toEqual([]);

    const ip = '10.200.0.1';
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await postForm(`/status/${page.url}/subscribe`, `email=limit${i}%40example.com&all=1`, ip);
      statuses.push(res.statusCode);
      if (res.statusCode === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429, 429]);
    await settled();
  });

  it('API: lists a page’s subscribers (paged) and deletes one; another account sees 404; a mail queued for a deleted subscriber fails as unsubscribed; subscriber mail is not an alert notification', async () => {
    const page = await createPage('Api');
    await subscribeConfirmed(page, 'one@example.com', [page.serviceB]);
    await subscribe(page, 'two@example.com');
    const all = await ok<any[]>(api('GET', `/v1/status-pages/${page.pageId}/subscribers`));
    expect(all.map((s) => [s.email, s.services, s.confirmed])).toEqual([
      ['one@example.com', [page.serviceB], true],
      ['two@example.com', null, false],
    ]);
    expect(Object.keys(all[0]).sort()).toEqual([
      'confirmed',
      'confirmed_at',
      'created_at',
      'email',
      'id',
      'services',
    ]);
    expect(await ok<any[]>(api('GET', `/v1/status-pages/${page.pageId}/subscribers?limit=1&page=2`))).toEqual(
      [all[1]],
    );
    expect((await api('GET', `/v1/status-pages/${page.pageId}/subscribers`, undefined, 'B')).statusCode).toBe(
      404,
    );
    expect(
      (await api('DELETE', `/v1/status-pages/${page.pageId}/subscribers/${all[0].id}`, undefined, 'B'))
        .statusCode,
    ).toBe(404);
    expect((await api('DELETE', `/v1/status-pages/${page.pageId}/subscribers/${all[0].id}`)).statusCode).toBe(
      204,
    );
    expect((await api('DELETE', `/v1/status-pages/${page.pageId}/subscribers/${all[0].id}`)).statusCode).toBe(
      404,
    );
    expect(
      (await ok<any[]>(api('GET', `/v1/status-pages/${page.pageId}/subscribers`))).map((s) => s.email),
    ).toEqual(['two@example.com']);

    // A mail still queued for a subscriber deleted meanwhile.
    const [inserted] = await db
      .insertInto('alert_notifications')
      .values({
        account_id: (await ok(api('GET', `/v1/status-pages/${page.pageId}`))).accountId,
        alert_id: null,
        channel_id: 0,
        check_id: null,
        alert_type: 'STATUS_PAGE_UPDATE',
        idempotency_key: `sp:${all[0].id}:late`,
        order_key: `sp:${all[0].id}`,
        state: 'PENDING',
        next_attempt_at: Date.now(),
        doc: JSON.stringify({ kind: 'confirmation', pageId: page.pageId, pageName: 'x' }),
        created_at: Date.now(),
        subscriber_id: all[0].id,
      })
      .returning('id')
      .execute();
    const id = inserted!.id;
    await settled();
    const row = await db
      .selectFrom('alert_notifications')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect([row.state, row.last_error]).toEqual(['FAILED', 'unsubscribed']);

    const listed = await ok<any>(api('GET', '/v1/alert-notifications?limit=100'));
    const entries: any[] = Array.isArray(listed) ? listed : (listed.entries ?? listed.data ?? []);
    expect(entries.length).toBe(0);
    expect((await api('GET', `/v1/alert-notifications/${id}`)).statusCode).toBe(404);
  });

  it('an incident a check’s triggerIncident opens and resolves mails the subscribers when notifySubscribers, in the result’s transaction', async () => {
    const page = await createPage('Trigger');
    await subscribeConfirmed(page, 'trigger-a@example.com', [page.serviceA]);
    await subscribeConfirmed(page, 'trigger-b@example.com', [page.serviceB]);
    await settled();
    const accountId = (await ok(api('GET', `/v1/status-pages/${page.pageId}`))).accountId;
    const check = (notifySubscribers: boolean) =>
      ({
        id: randomUUID(),
        name: 'Checkout API',
        triggerIncident: {
          serviceId: page.serviceA,
          severity: 'CRITICAL',
          name: 'Checkout failing',
          description: 'Checkout answers 500.',
          notifySubscribers,
        },
      }) as unknown as CheckDoc;
    const alert = (alertType: EngineAlert['alertType'], episodeId: string): EngineAlert => ({
      alertType,
      episodeId,
      sequence: 0,
      isReminder: false,
      reminderSequence: 0,
      notify: true,
      resultId: randomUUID(),
    });
    // As the outbox does: the incident in the result's transaction, its id kept in the opening alert.
    const run = async (doc: CheckDoc, type: EngineAlert['alertType'], episodeId: string) =>
      db.transaction().execute(async (trx) => {
        const incidentId = await incidentForAlert(trx, {
          accountId,
          check: doc,
          alert: alert(type, episodeId),
          nowMs: Date.now(),
        });
        if (type === 'ALERT_FAILURE') {
          await trx
            .insertInto('check_alerts')
            .values({
              id: randomUUID(),
              account_id: accountId,
              check_id: doc.id,
              alert_type: type,
              episode_id: episodeId,
              sequence: 0,
              notified: 1,
              result_id: randomUUID(),
              doc: JSON.stringify({ INCIDENT_ID: incidentId }),
              created_at: Date.now(),
            })
            .execute();
        }
        return incidentId;
      });

    const quiet = check(false);
    expect(await run(quiet, 'ALERT_FAILURE', 'quiet-episode')).not.toBeNull();
    expect(await run(quiet, 'ALERT_RECOVERY', 'quiet-episode')).not.toBeNull();
    await settled();
    expect(mailsTo('trigger-a@example.com')).toHaveLength(1);

    const loud = check(true);
    const opened = await run(loud, 'ALERT_FAILURE', 'loud-episode');
    await until('opening mail', () => mailsTo('trigger-a@example.com')[1]);
    expect(mailsTo('trigger-a@example.com')[1]!.subject).toBe(
      '[Trigger <Status> & "Co"] Investigating: Checkout failing',
    );
    expect(await run(loud, 'ALERT_RECOVERY', 'loud-episode')).toBe(opened);
    await until('resolving mail', () => mailsTo('trigger-a@example.com')[2]);
    const resolved = mailsTo('trigger-a@example.com')[2]!;
    expect(resolved.subject).toBe('[Trigger <Status> & "Co"] Resolved: Checkout failing');
    expect(resolved.text).toContain('Checkout API has recovered.');
    await settled();
    expect(mailsTo('trigger-a@example.com')).toHaveLength(3);
    expect(mailsTo('trigger-b@example.com')).toHaveLength(1);
  });

  it('fans one update out to 300 confirmed subscribers: one mail each, each with its own Message-ID', async () => {
    // How fast 1,000 are mailed is the benchmark's (npm run bench -- status-pages), not a timed test.
    const count = 300;
    const page = await createPage('Burst');
    const accountId = (await ok(api('GET', `/v1/status-pages/${page.pageId}`))).accountId;
    const now = Date.now();
    const rows = Array.from({ length: count }, (_, i) => ({
      id: randomUUID(),
      account_id: accountId,
      status_page_id: page.pageId,
      email: `burst-${i}@example.com`,
      service_ids: null,
      created_at: now,
      confirmed_at: now,
      confirmation_sent_at: now,
    }));
    for (let i = 0; i < rows.length; i += 100)
      await db
        .insertInto('status_page_subscribers')
        .values(rows.slice(i, i + 100))
        .execute();
    const before = peer.mails.length;
    await ok(
      api('POST', '/v1/incidents', {
        name: 'Everything is down',
        impact: 'MAJOR',
        services: [{ id: page.serviceA }],
        incidentUpdates: [{ status: 'INVESTIGATING', description: 'Looking.', notifySubscribers: true }],
      }),
      201,
    );
    await until(`${count} mails`, () => peer.mails.length - before >= count, 20_000);
    await settled();
    const burst = peer.mails.slice(before).filter((m) => m.to[0]!.startsWith('burst-'));
    expect(burst).toHaveLength(count);
    expect(new Set(burst.map((m) => m.to[0])).size).toBe(count);
    expect(new Set(burst.map((m) => m.messageId)).size).toBe(count);
  }, 30_000);
});
