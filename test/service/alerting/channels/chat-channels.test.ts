import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSenders, providersFromEnv, senders } from '../../../../src/service/alerting/channels/index.js';
import { matrixTxnId } from '../../../../src/service/alerting/channels/matrix.js';
import { OutboundPolicy } from '../../../../src/service/platform/http/outbound-policy.js';
import { type HttpPeer, type RecordedRequest, startHttpPeer } from '../../../helpers/alert-peers.js';
import { type TestService, testService } from '../../../helpers/service.js';
import * as receivers from './chat-receivers.js';
import { GOOD, type Verdict } from './chat-receivers.js';
import { channel, expectNoSecret, never, notification } from './fixtures.js';

/**
 * The chat and push channels end to end: a real service (its delivery worker sends) and, per provider, a real
 * receiver on loopback that checks the provider's documented format and answers as the provider does. Each
 * provider is created through the API with its credential planted, tested with `POST /v1/alert-channels/{id}/test`
 * (the queue and the delivery worker: the path every alert takes), then given a credential the provider refuses:
 * the attempt is FAILED with the provider's status in the delivery log. The credential shows nowhere.
 */

type Provider = {
  label: string;
  receiver: (req: RecordedRequest) => Verdict;
  type: string;
  /** The channel's config: with the credential the receiver accepts, or one it refuses. */
  config: (origin: string, good: boolean) => Record<string, unknown>;
  /** The credentials planted in the config (checked absent from every answer). */
  secrets: string[];
  /** Whether the credential is a secret field, masked in GET answers (else the URL is the credential). */
  masked: boolean;
  okStatus: number;
  errorStatus: number;
};

const bad = 'refused-credential-0000000000000';

const PROVIDERS: Provider[] = [
  {
    label: 'Microsoft Teams',
    receiver: receivers.teams,
    type: 'WEBHOOK',
    config: (o, good) => ({
      name: 'ops in Teams',
      url: `${o}/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sig=${good ? GOOD.teamsSig : bad}`,
      webhookType: 'WEBHOOK_MSTEAMS',
    }),
    secrets: [GOOD.teamsSig],
    masked: false,
    okStatus: 202,
    errorStatus: 401,
  },
  {
    label: 'Discord',
    receiver: receivers.discord,
    type: 'WEBHOOK',
    config: (o, good) => ({
      name: 'ops in Discord',
      url: `${o}/api/webhooks/1234567890/${good ? GOOD.discordToken : bad}`,
      webhookType: 'WEBHOOK_DISCORD',
    }),
    secrets: [GOOD.discordToken],
    masked: false,
    okStatus: 204,
    errorStatus: 401,
  },
  {
    label: 'Telegram',
    receiver: receivers.telegram,
    type: 'WEBHOOK',
    config: (o, good) => ({
      name: 'ops in Telegram',
      url: o,
      webhookType: 'WEBHOOK_TELEGRAM',
      chatId: '-1001234567890',
      botToken: good ? GOOD.telegramToken : `999:${bad}`,
    }),
    secrets: [GOOD.telegramToken],
    masked: true,
    okStatus: 200,
    errorStatus: 401,
  },
  {
    label: 'Mattermost',
    receiver: receivers.mattermost,
    type: 'MATTERMOST',
    config: (o, good) => ({ url: `${o}/hooks/${good ? GOOD.mattermostKey : bad}`, channel: 'town-square' }),
    secrets: [GOOD.mattermostKey],
    masked: false,
    okStatus: 200,
    errorStatus: 400,
  },
  {
    label: 'Google Chat',
    receiver: receivers.googleChat,
    type: 'GOOGLE_CHAT',
    // The API takes https only; the test receiver speaks http, so the channel is stored through the store.
    config: (o, good) => ({
      url: `${o}/v1/spaces/AAAA/messages?key=public-key&token=${good ? GOOD.googleToken : bad}`,
    }),
    secrets: [GOOD.googleToken],
    masked: false,
    okStatus: 200,
    errorStatus: 401,
  },
  {
    label: 'ntfy',
    receiver: receivers.ntfy,
    type: 'NTFY',
    config: (o, good) => ({
      name: 'phones',
      url: o,
      topic: 'outpost-alerts',
      priority: 5,
      accessToken: good ? GOOD.ntfyToken : `tk_${bad}`,
    }),
    secrets: [GOOD.ntfyToken],
    masked: true,
    okStatus: 200,
    errorStatus: 403,
  },
  {
    label: 'Gotify',
    receiver: receivers.gotify,
    type: 'GOTIFY',
    config: (o, good) => ({ name: 'gotify', url: o, token: good ? GOOD.gotifyToken : bad }),
    secrets: [GOOD.gotifyToken],
    masked: true,
    okStatus: 200,
    errorStatus: 401,
  },
  {
    label: 'Pushover',
    receiver: receivers.pushover,
    type: 'PUSHOVER',
    config: (o, good) => ({
      name: 'on call',
      apiToken: good ? GOOD.pushoverToken : bad,
      userKey: GOOD.pushoverUser,
      priority: 1,
      url: o,
    }),
    secrets: [GOOD.pushoverToken, GOOD.pushoverUser],
    masked: true,
    okStatus: 200,
    errorStatus: 400,
  },
  {
    label: 'Matrix',
    receiver: receivers.matrix,
    type: 'MATRIX',
    config: (o, good) => ({
      name: 'ops room',
      homeserverUrl: o,
      roomId: '!ops:matrix.example.org',
      accessToken: good ? GOOD.matrixToken : bad,
    }),
    secrets: [GOOD.matrixToken],
    masked: true,
    okStatus: 200,
    errorStatus: 401,
  },
  {
    label: 'Apprise (stateless URLs)',
    receiver: receivers.apprise,
    type: 'APPRISE',
    config: (o, good) => ({
      name: 'apprise',
      url: o,
      urls: good ? GOOD.appriseUrls : `tgram://${bad}/1`,
    }),
    secrets: [GOOD.appriseUrls, 'apprise-planted-bot-token-8'],
    masked: true,
    okStatus: 200,
    errorStatus: 424,
  },
];

let svc: TestService;
const peers = new Map<string, HttpPeer>();
const verdicts = new Map<string, Verdict[]>();

beforeAll(async () => {
  svc = await testService({ outbound: { allow: ['127.0.0.1/32'] } });
  for (const p of PROVIDERS) {
    const list: Verdict[] = [];
    verdicts.set(p.label, list);
    peers.set(
      p.label,
      await startHttpPeer((req) => {
        const verdict = p.receiver(req);
        list.push(verdict);
        return verdict.answer;
      }),
    );
  }
});
afterAll(async () => {
  await svc.close();
  await Promise.all([...peers.values()].map((peer) => peer.close()));
  await closeSenders();
});

/** Creates a channel through the API (GOOGLE_CHAT, https only, gets its https URL swapped in the store). */
async function createChannel(p: Provider, origin: string, good: boolean) {
  const config = p.config(origin, good);
  if (p.type !== 'GOOGLE_CHAT') {
    const res = await svc.request('POST', '/v1/alert-channels', { type: p.type, config });
    expect(res.statusCode, res.body).toBe(201);
    return res;
  }
  const https = { url: String(config.url).replace(/^http:/, 'https:') };
  const res = await svc.request('POST', '/v1/alert-channels', { type: p.type, config: https });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().id as number;
  const row = await svc.context.db
    .selectFrom('alert_channels')
    .select('doc')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  const doc = JSON.parse(String(row.doc));
  doc.config.url = config.url;
  await svc.context.db
    .updateTable('alert_channels')
    .set({ doc: JSON.stringify(doc) })
    .where('id', '=', id)
    .execute();
  return res;
}

describe.each(PROVIDERS)('$label channel', (p) => {
  it('delivers the test notification in the documented format; a refused credential is FAILED in the log; the credential shows nowhere', async () => {
    const peer = peers.get(p.label)!;
    const list = verdicts.get(p.label)!;
    const before = list.length;

    const created = await createChannel(p, peer.origin, true);
    const id = created.json().id as number;
    const read = await svc.request('GET', `/v1/alert-channels/${id}`);
    expect(read.statusCode).toBe(200);
    if (p.masked) {
      for (const secret of p.secrets) {
        expect(created.body).not.toContain(secret);
        expect(read.body).not.toContain(secret);
      }
      expect(read.body).toContain('*****');
    }

    const ok = await svc.request('POST', `/v1/alert-channels/${id}/test`);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({
      state: 'DELIVERED',
      attempts: [{ outcome: 'DELIVERED', statusCode: p.okStatus, error: null }],
    });
    expect(list.length).toBe(before + 1);
    expect(list[before]!.problems).toEqual([]);

    const refused = await createChannel(p, peer.origin, false);
    const refusedId = refused.json().id as number;
    const failed = await svc.request('POST', `/v1/alert-channels/${refusedId}/test`);
    expect(failed.statusCode, failed.body).toBe(200);
    expect(failed.json()).toMatchObject({
      state: 'FAILED',
      attempts: [{ outcome: 'FAILED', statusCode: p.errorStatus }],
    });
    expect(list[list.length - 1]!.problems).toEqual([]);
    const log = await svc.request('GET', `/v1/alert-notifications?alertChannelId=${refusedId}`);
    expect(log.statusCode).toBe(200);
    const entries = log.json() as { state: string; attempts: { statusCode: number; error: string }[] }[];
    expect(entries[0]).toMatchObject({ state: 'FAILED', attempts: [{ statusCode: p.errorStatus }] });
    expect(entries[0]!.attempts[0]!.error).toMatch(new RegExp(`answered ${p.errorStatus}`));

    const okLog = await svc.request('GET', `/v1/alert-notifications?alertChannelId=${id}`);
    for (const body of [ok.body, failed.body, log.body, okLog.body]) {
      for (const secret of p.secrets) expect(body).not.toContain(secret);
    }
  });
});

describe('chat and push messages', () => {
  const providers = { ...providersFromEnv({}), outbound: new OutboundPolicy({ allow: ['127.0.0.1/32'] }) };

  it('Telegram: the failure in Telegram HTML (escaped values, the result link); a template replaces the text', async () => {
    const peer = peers.get('Telegram')!;
    const n = notification({ CHECK_NAME: 'checkout <API> & co' });
    const config = receiversConfig('Telegram', peer.origin);
    const result = await senders.WEBHOOK(n, channel('WEBHOOK', config), providers, never);
    expect(result).toMatchObject({ outcome: 'DELIVERED', statusCode: 200 });
    const body = JSON.parse(peer.requests.at(-1)!.body);
    expect(body).toMatchObject({ chat_id: '-1001234567890', parse_mode: 'HTML' });
    expect(body.text).toContain('<b>❌ checkout &#60;API&#62; &#38; co is failing in eu-west-1');
    expect(body.text).toContain(
      '<a href="https://outpost.example/checks/x/results/res-1">View the result</a>',
    );
    expectNoSecret(result, [GOOD.telegramToken]);

    const templated = await senders.WEBHOOK(
      n,
      channel('WEBHOOK', { ...config, template: '<b>{{CHECK_NAME}}</b> {{ALERT_TYPE}}' }),
      providers,
      never,
    );
    expect(templated.outcome).toBe('DELIVERED');
    expect(JSON.parse(peer.requests.at(-1)!.body).text).toBe(
      '<b>checkout &lt;API&gt; &amp; co</b> ALERT_FAILURE',
    );
  });

  it('Teams gets an Adaptive Card with the facts and a button; Discord an embed with mentions off', async () => {
    const teams = peers.get('Microsoft Teams')!;
    await senders.WEBHOOK(
      notification(),
      channel('WEBHOOK', receiversConfig('Microsoft Teams', teams.origin)),
      providers,
      never,
    );
    const card = JSON.parse(teams.requests.at(-1)!.body).attachments[0].content;
    expect(card.body[0]).toMatchObject({
      type: 'TextBlock',
      text: expect.stringContaining('checkout API is failing'),
    });
    expect(card.body[1].facts).toContainEqual({ title: 'Location', value: 'eu-west-1' });
    expect(card.actions[0]).toMatchObject({
      type: 'Action.OpenUrl',
      url: 'https://outpost.example/checks/x/results/res-1',
    });

    const discord = peers.get('Discord')!;
    const r = await senders.WEBHOOK(
      notification({ CHECK_NAME: '@everyone look' }),
      channel('WEBHOOK', receiversConfig('Discord', discord.origin)),
      providers,
      never,
    );
    expect(r.statusCode).toBe(204);
    const body = JSON.parse(discord.requests.at(-1)!.body);
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(body.embeds[0]).toMatchObject({
      title: '@everyone look',
      color: 0xcf222e,
      url: 'https://outpost.example/checks/x/results/res-1',
    });
  });

  it('Matrix sends every attempt of a notification under one transaction id, distinct per notification', async () => {
    const peer = peers.get('Matrix')!;
    const config = receiversConfig('Matrix', peer.origin);
    const n = notification({}, { key: 'chk1.res-0.ALERT_FAILURE.0.9' });
    await senders.MATRIX(n, channel('MATRIX', config), providers, never);
    await senders.MATRIX(n, channel('MATRIX', config), providers, never);
    const [a, b] = peer.requests.slice(-2).map((r) => r.url);
    expect(a).toBe(b);
    expect(a).toContain(`/send/m.room.message/${matrixTxnId('chk1.res-0.ALERT_FAILURE.0.9')}`);
    expect(a).toContain('/rooms/!ops%3Amatrix.example.org/');
    expect(matrixTxnId('other')).not.toBe(matrixTxnId('chk1.res-0.ALERT_FAILURE.0.9'));
    const body = JSON.parse(peer.requests.at(-1)!.body);
    expect(body.formatted_body).toContain('<br>');
    expect(body.body).toContain('View the result: https://outpost.example/checks/x/results/res-1');
  });

  it('Apprise with a stored key posts to /notify/{key} with its tag; a recovery is type success', async () => {
    const peer = peers.get('Apprise (stateless URLs)')!;
    const r = await senders.APPRISE(
      notification({ ALERT_TYPE: 'ALERT_RECOVERY' }),
      channel('APPRISE', { name: 'a', url: peer.origin, key: 'outpost', tag: 'ops' }),
      providers,
      never,
    );
    expect(r.outcome).toBe('DELIVERED');
    expect(peer.requests.at(-1)!.url).toBe('/notify/outpost');
    expect(JSON.parse(peer.requests.at(-1)!.body)).toMatchObject({ type: 'success', tag: 'ops' });
    const none = await senders.APPRISE(
      notification(),
      channel('APPRISE', { name: 'a', url: peer.origin }),
      providers,
      never,
    );
    expect(none).toMatchObject({
      outcome: 'FAILED',
      error: expect.stringContaining('needs config.key or config.urls'),
    });
  });

  it('a provider that cannot be reached is RETRY, its error without the credential', async () => {
    const gone = await startHttpPeer();
    const origin = gone.origin;
    await gone.close();
    const r = await senders.GOTIFY(
      notification(),
      channel('GOTIFY', { name: 'g', url: origin, token: GOOD.gotifyToken }),
      providers,
      never,
    );
    expect(r).toMatchObject({ outcome: 'RETRY', statusCode: null });
    expectNoSecret(r, [GOOD.gotifyToken]);
  });
});

function receiversConfig(label: string, origin: string): Record<string, unknown> {
  return PROVIDERS.find((p) => p.label === label)!.config(origin, true);
}
