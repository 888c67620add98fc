import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSenders, providersFromEnv, senders } from '../../../../src/service/alerting/channels/index.js';
import type { NotificationDoc } from '../../../../src/service/alerting/types.js';
import { OutboundPolicy } from '../../../../src/service/platform/http/outbound-policy.js';
import { type HttpPeer, type PeerHandler, startHttpPeer } from '../../../helpers/alert-peers.js';
import { LIMIT_MS, worstLoopGap } from '../../../helpers/event-loop.js';
import { channel, doc, expectNoSecret, never, notification } from './fixtures.js';

// The peer listens on loopback, which the outbound policy refuses unless the allow-list names it.
const providers = { ...providersFromEnv({}), outbound: new OutboundPolicy({ allow: ['127.0.0.1/32'] }) };
const send = senders.WEBHOOK;

/** Answers request n as `answers[n]` when set; echoes the request otherwise (to catch leaked secrets). */
let script: PeerHandler | undefined;
let peer: HttpPeer;
beforeAll(async () => {
  peer = await startHttpPeer((req, n) =>
    script ? script(req, n) : { status: 200, body: JSON.stringify({ echo: req }) },
  );
});
afterAll(async () => {
  await peer.close();
  await closeSenders();
});

/** Runs a send against a fresh script; returns the result and the one request it made. */
async function run(
  config: Record<string, unknown>,
  options: { handler?: PeerHandler; n?: ReturnType<typeof notification> } = {},
) {
  script = options.handler;
  const before = peer.requests.length;
  const result = await send(
    options.n ?? notification(),
    channel('WEBHOOK', { name: 'hook', url: `${peer.origin}/hook`, ...config }),
    providers,
    never,
  );
  return { result, request: peer.requests[before], requests: peer.requests.slice(before) };
}

describe('WEBHOOK sender', () => {
  it('renders the template with every notification variable and the account variables', async () => {
    const names = Object.keys(doc()) as Array<keyof NotificationDoc>;
    const template = [
      ...names.map((k) => `${k}={{${k}}}`),
      'RAW={{{CHECK_DESCRIPTION}}}',
      'ENV={{ENVIRONMENT}}',
      'TOKEN={{{API_TOKEN}}}',
      'EACH={{#each TAGS}}[{{@index}}:{{this}}]{{/each}}',
      'MISSING=({{NOT_A_VARIABLE}})',
    ].join('\n');
    const n = notification({}, { accountVariables: { ENVIRONMENT: 'prod<1>', API_TOKEN: 'tok&en' } });
    const { result, request } = await run({ template }, { n });
    expect(result).toMatchObject({ outcome: 'DELIVERED', statusCode: 200, error: null });
    const v = doc();
    // Handlebars' escaping: & < > " ' ` = as entities.
    const entities: Record<string, string> = {
      '&': '&amp;',
      '<': '&lt;',
      '>': '&gt;',
      '"': '&quot;',
      "'": '&#x27;',
      '`': '&#x60;',
      '=': '&#x3D;',
    };
    const htmlEscape = (s: string) => s.replace(/[&<>"'`=]/g, (c) => entities[c] ?? c);
    const expected = [
      ...names.map((k) => {
        const value = v[k];
        return `${k}=${value === null ? '' : htmlEscape(Array.isArray(value) ? value.join(',') : String(value))}`;
      }),
      'RAW=Checks <checkout> & payment',
      'ENV=prod&lt;1&gt;',
      'TOKEN=tok&en',
      'EACH=[0:prod][1:payments]',
      'MISSING=()',
    ].join('\n');
    expect(request?.body).toBe(expected);
    expect(request?.method).toBe('POST');
    expect(request?.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(request?.body).toContain('CHECK_DESCRIPTION=Checks &lt;checkout&gt; &amp; payment');
  });

  it('sends every variable as JSON without a template, with webhook-id and webhook-timestamp but no signature', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { result, request } = await run({ template: null });
    expect(result.outcome).toBe('DELIVERED');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body ?? '')).toEqual(doc());
    expect(request?.headers['webhook-id']).toBe('chk1.res-0.ALERT_FAILURE.0.7');
    expect(Number(request?.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before);
    expect(request?.headers['webhook-signature']).toBeUndefined();
    expect(request?.headers['x-checkly-signature']).toBeUndefined();
  });

  it('signs with x-checkly-signature and Standard Webhooks (whsec_ key decoded), verified by recomputing', async () => {
    const key = randomBytes(24);
    const secret = `whsec_${key.toString('base64')}`;
    const template = '{"check":"{{CHECK_NAME}}","type":"{{ALERT_TYPE}}"}';
    const { result, request } = await run({ template, webhookSecret: secret });
    expect(result.outcome).toBe('DELIVERED');
    expectNoSecret(result, [secret, key.toString('base64')]);
    const body = request?.body ?? '';
    expect(JSON.parse(body)).toEqual({ check: 'checkout API', type: 'ALERT_FAILURE' });
    expect(request?.headers['content-type']).toBe('application/json');
    const h = request?.headers ?? {};
    const id = String(h['webhook-id']);
    const ts = String(h['webhook-timestamp']);
    expect(h['x-checkly-timestamp']).toBe(ts);
    expect(h['x-checkly-signature']).toBe(createHmac('sha256', secret).update(body).digest('hex'));
    expect(h['webhook-signature']).toBe(
      `v1,${createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}`,
    );
  });

  it('signs with the UTF-8 bytes of a secret without the whsec_ prefix', async () => {
    const secret = 'plain-secret-öß-123';
    const { request, result } = await run({ webhookSecret: secret });
    expectNoSecret(result, [secret]);
    const h = request?.headers ?? {};
    const body = request?.body ?? '';
    const signed = `${h['webhook-id']}.${h['webhook-timestamp']}.${body}`;
    expect(h['webhook-signature']).toBe(
      `v1,${createHmac('sha256', Buffer.from(secret)).update(signed).digest('base64')}`,
    );
  });

  it('appends query parameters and sends configured headers; GET has no body', async () => {
    const { result, request } = await run({
      url: `${peer.origin}/hook?existing=1`,
      method: 'GET',
      queryParameters: [
        { key: 'team', value: 'a b&c' },
        { key: 'team', value: 'second' },
      ],
      headers: [
        { key: 'X-Custom', value: 'yes' },
        { key: 'Authorization', value: 'Bearer hidden-credential-42' },
      ],
    });
    expect(result.outcome).toBe('DELIVERED');
    const url = new URL(request?.url ?? '', peer.origin);
    expect(url.pathname).toBe('/hook');
    expect(url.searchParams.get('existing')).toBe('1');
    expect(url.searchParams.getAll('team')).toEqual(['a b&c', 'second']);
    expect(request?.method).toBe('GET');
    expect(request?.body).toBe('');
    expect(request?.headers['x-custom']).toBe('yes');
    expect(request?.headers.authorization).toBe('Bearer hidden-credential-42');
    expect(request?.headers['webhook-id']).toBeDefined();
    // The peer echoes the request back: only the status is kept, so nothing of it shows.
    expect(result.answer).toBe('HTTP 200 OK');
    expectNoSecret(result, ['hidden-credential-42']);
  });

  it('refuses a header holding CR/LF and a template that does not compile, without sending', async () => {
    const crlf = await run({ headers: [{ key: 'X-Evil', value: 'a\r\nInjected: yes' }] });
    expect(crlf.result.outcome).toBe('FAILED');
    expect(crlf.result.error).toMatch(/line break/);
    expect(crlf.requests).toHaveLength(0);

    const broken = await run({ template: '{{#each TAGS}}unclosed' });
    expect(broken.result).toMatchObject({ outcome: 'FAILED', statusCode: null });
    expect(broken.result.error).toMatch(/does not compile: .*Parse error|does not compile: .*Expecting/s);
    expect(broken.requests).toHaveLength(0);
  });

  it('refuses templates that would run away, off the event loop: nested loops, repeated large variables, slow compiles', async () => {
    // Warm the template thread so its start (tsx in tests) is not counted below.
    await run({ template: 'warm {{CHECK_NAME}}' });

    const tags = Array.from({ length: 50 }, (_, k) => `tag-${k}`);
    const bomb = `${'{{#each @root.TAGS}}'.repeat(8)}x${'{{/each}}'.repeat(8)}`;
    const loops = await worstLoopGap(() => run({ template: bomb }, { n: notification({ TAGS: tags }) }));
    expect(loops.result.result.outcome).toBe('FAILED');
    expect(loops.result.result.error).toMatch(/loops more than 10000 times/);
    expect(loops.result.requests).toHaveLength(0);
    expect(loops.worstMs).toBeLessThan(LIMIT_MS);

    // A variable repeated far past the body bound is refused before it is copied that often.
    const big = 'e'.repeat(60_000);
    const wide = await worstLoopGap(() =>
      run(
        { template: '{{CHECK_ERROR_MESSAGE}}'.repeat(2_000) },
        { n: notification({ CHECK_ERROR_MESSAGE: big }) },
      ),
    );
    expect(wide.result.result.outcome).toBe('FAILED');
    expect(wide.result.result.error).toMatch(/reads more than/);
    expect(wide.worstMs).toBeLessThan(LIMIT_MS);

    // 64 KB of small blocks takes Handlebars about a second to compile: it does so in the thread,
    // and a compile that outlasts the deadline is stopped.
    const slow = '{{#if CHECK_NAME}}x{{/if}}'.repeat(2_500);
    const compiled = await worstLoopGap(() => run({ template: slow }));
    expect(compiled.worstMs).toBeLessThan(LIMIT_MS);
    const outcome = compiled.result.result.outcome;
    if (outcome === 'DELIVERED') expect(compiled.result.request?.body).toBe('x'.repeat(2_500));
    else expect(compiled.result.result.error).toMatch(/did not render within 2000 ms/);

    // The thread still serves the next template after one was stopped.
    const after = await run({ template: 'ok {{CHECK_NAME}}' });
    expect(after.request?.body).toBe('ok checkout API');
  });

  it('500 is RETRY, 400 FAILED, 429 RETRY after Retry-After (seconds and HTTP-date), 302 FAILED not followed', async () => {
    const r500 = await run({}, { handler: () => ({ status: 500, body: 'boom' }) });
    expect(r500.result).toMatchObject({
      outcome: 'RETRY',
      statusCode: 500,
      answer: 'HTTP 500 Internal Server Error',
      retryAfterMs: null,
    });

    const r400 = await run({}, { handler: () => ({ status: 400, body: 'bad payload' }) });
    expect(r400.result).toMatchObject({ outcome: 'FAILED', statusCode: 400, answer: 'HTTP 400 Bad Request' });

    const r429 = await run({}, { handler: () => ({ status: 429, headers: { 'retry-after': '7' } }) });
    expect(r429.result).toMatchObject({ outcome: 'RETRY', statusCode: 429, retryAfterMs: 7000 });

    const date = new Date(Date.now() + 120_000).toUTCString();
    const rDate = await run({}, { handler: () => ({ status: 503, headers: { 'retry-after': date } }) });
    expect(rDate.result.outcome).toBe('RETRY');
    expect(rDate.result.retryAfterMs).toBeGreaterThan(110_000);
    expect(rDate.result.retryAfterMs).toBeLessThanOrEqual(120_000);

    const r302 = await run({}, { handler: () => ({ status: 302, headers: { location: '/elsewhere' } }) });
    expect(r302.result).toMatchObject({ outcome: 'FAILED', statusCode: 302 });
    expect(r302.result.error).toMatch(/redirects are not followed/);
    expect(r302.result.error).not.toContain('/elsewhere');
    expect(r302.requests).toHaveLength(1);
  });

  it('keeps only the status of a large answer, never its body, and a planted secret never appears', async () => {
    const secret = 'whsec_c2VjcmV0LXNpZ25pbmcta2V5LTEyMzQ1Njc4OTA=';
    const variableSecret = 'account-variable-secret-987';
    const n = notification({}, { accountVariables: { DB_PASSWORD: variableSecret } });
    const handler: PeerHandler = (req) => ({
      status: 500,
      body: `${secret} ${variableSecret} ${req.body} ${'z'.repeat(1_000_000)}`,
    });
    const { result } = await run({ webhookSecret: secret, template: 'pw={{DB_PASSWORD}}' }, { n, handler });
    expect(result.outcome).toBe('RETRY');
    expect(result.answer).toBe('HTTP 500 Internal Server Error');
    expect(JSON.stringify(result)).not.toContain('zzz');
    expectNoSecret(result, [secret, variableSecret]);
  });

  it('gives up at the signal: a peer that never answers is RETRY without waiting for the timeout', async () => {
    const controller = new AbortController();
    script = () => 'hang';
    const started = performance.now();
    setTimeout(() => controller.abort(), 200);
    const result = await send(
      notification(),
      channel('WEBHOOK', { name: 'hook', url: `${peer.origin}/hang` }),
      providers,
      controller.signal,
    );
    expect(result).toMatchObject({ outcome: 'RETRY', statusCode: null });
    expect(result.error).toMatch(/aborted/);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
