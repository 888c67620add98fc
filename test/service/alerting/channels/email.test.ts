import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageIdOf } from '../../../../src/service/alerting/channels/email.js';
import { closeSenders, providersFromEnv, senders } from '../../../../src/service/alerting/channels/index.js';
import { refusedOrigin, type SmtpPeer, startSmtpPeer } from '../../../helpers/alert-peers.js';
import { channel, expectNoSecret, never, notification } from './fixtures.js';

const send = senders.EMAIL;
const to = channel('EMAIL', { address: 'oncall@example.com' });

/** Mail number n is refused with the code in `refusals[n]`, when set. */
const refusals = new Map<number, 451 | 550>();
let peer: SmtpPeer;
beforeAll(async () => {
  peer = await startSmtpPeer({ failWith: (_mail, n) => refusals.get(n) });
});
afterAll(async () => {
  await closeSenders();
  await peer.close();
});

function providers(url = peer.url) {
  return providersFromEnv({ OUTPOST_SMTP_URL: url, OUTPOST_SMTP_FROM: 'Outpost <alerts@outpost.test>' });
}

describe('EMAIL sender', () => {
  it('sends text and HTML with the title as subject and a Message-ID from the idempotency key', async () => {
    const n = notification({ CHECK_NAME: 'checkout <API> & "co"' }, { key: 'chk1.res-0.ALERT_FAILURE.0.7' });
    const result = await send(n, to, providers(), never);
    expect(result).toMatchObject({ outcome: 'DELIVERED', statusCode: 250, error: null, retryAfterMs: null });
    const mail = peer.mails.at(-1);
    expect(mail?.to).toEqual(['oncall@example.com']);
    expect(mail?.from).toBe('alerts@outpost.test');
    expect(mail?.subject).toBe('checkout API has failed');
    expect(mail?.messageId).toBe('<chk1.res-0.ALERT_FAILURE.0.7@outpost>');
    expect(mail?.text).toContain(
      '❌ checkout <API> & "co" is failing in eu-west-1: expected status 200, got 503',
    );
    expect(mail?.text).toContain('Result: https://outpost.example/checks/x/results/res-1');
    // The HTML part escapes every value: the check name and the description hold markup.
    expect(mail?.html).toContain('checkout &#60;API&#62; &#38; &#34;co&#34; is failing');
    expect(mail?.html).toContain('Checks &#60;checkout&#62; &#38; payment');
    expect(mail?.html).not.toContain('<API>');
    expect(mail?.html).toContain('<a href="https://outpost.example/checks/x/results/res-1">');
  });

  it('says a test alert is a test; a recovery says it recovered', async () => {
    await send(notification({ ALERT_TYPE: 'ALERT_TEST' }, { key: 'test-1' }), to, providers(), never);
    const test = peer.mails.at(-1);
    expect(test?.subject).toBe('[Test] checkout API has failed');
    expect(test?.text).toContain('This is a test alert from Outpost for checkout API; nothing is failing');

    const recovery = notification({ ALERT_TYPE: 'ALERT_RECOVERY', ALERT_TITLE: 'checkout API recovered' });
    expect((await send(recovery, to, providers(), never)).outcome).toBe('DELIVERED');
    expect(peer.mails.at(-1)?.text).toContain('✅ checkout API recovered in eu-west-1');
  });

  it('makes a valid Message-ID of any key, distinct for distinct keys', () => {
    expect(messageIdOf('a.b-c_d')).toBe('<a.b-c_d@outpost>');
    const odd = messageIdOf('chk 1..<evil>@x');
    expect(odd).toMatch(/^<[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@outpost>$/);
    expect(messageIdOf('chk 1..<evil>@y')).not.toBe(odd);
    expect(messageIdOf('x'.repeat(1000)).length).toBeLessThan(230);
  });

  it('is RETRY when the server answers 451 and FAILED on 550; the next mail goes through', async () => {
    const base = peer.received.length;
    refusals.set(base, 451);
    refusals.set(base + 1, 550);
    const temporary = await send(notification(), to, providers(), never);
    expect(temporary).toMatchObject({ outcome: 'RETRY', statusCode: 451 });
    expect(temporary.error).toMatch(/451 \(temporary\)/);
    const permanent = await send(notification(), to, providers(), never);
    expect(permanent).toMatchObject({ outcome: 'FAILED', statusCode: 550 });
    expect(permanent.error).toMatch(/550 \(permanent\)/);
    expect((await send(notification(), to, providers(), never)).outcome).toBe('DELIVERED');
  });

  it('is RETRY when the server cannot be reached, and keeps its password out of the error', async () => {
    const port = new URL(await refusedOrigin()).port;
    const password = 'smtp-pass-word-4711';
    const result = await send(
      notification(),
      to,
      providers(`smtp://user:${password}@127.0.0.1:${port}`),
      never,
    );
    expect(result).toMatchObject({ outcome: 'RETRY', statusCode: null });
    expect(result.error).toMatch(/could not be reached/);
    expectNoSecret(result, [password]);
  });

  it('is FAILED naming the variables when SMTP is not configured', async () => {
    for (const env of [{}, { OUTPOST_SMTP_URL: peer.url }, { OUTPOST_SMTP_FROM: 'a@b.c' }]) {
      const result = await send(notification(), to, providersFromEnv(env), never);
      expect(result).toEqual({
        outcome: 'FAILED',
        statusCode: null,
        answer: null,
        error: 'EMAIL channels need OUTPOST_SMTP_URL and OUTPOST_SMTP_FROM',
        retryAfterMs: null,
      });
    }
  });
});
