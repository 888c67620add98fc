import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSenders, providersFromEnv, senders } from '../../../../src/service/alerting/channels/index.js';
import { type SmtpPeer, startSmtpPeer } from '../../../helpers/alert-peers.js';
import { channel, never, notification } from './fixtures.js';
import { parseServiceConfig } from '../../../../src/service/config.js';

/** The alert e-mail as a real SMTP server receives it: the subscriber mails' layout, UTC times, result and screenshot links. */
let peer: SmtpPeer;
beforeAll(async () => {
  peer = await startSmtpPeer();
});
afterAll(async () => {
  await closeSenders();
  await peer.close();
});

const to = channel('EMAIL', { address: 'oncall@example.com' });
const providers = () =>
  providersFromEnv({ OUTPOST_SMTP_URL: peer.url, OUTPOST_SMTP_FROM: 'Outpost <alerts@outpost.test>' });
const link = 'https://outpost.example/checks/b1/results/res-9';

describe('alert e-mail', () => {
  it('a failing browser check: framed HTML, the start in UTC said so, a button to the result and the screenshot there', async () => {
    const n = notification({
      CHECK_TYPE: 'BROWSER',
      CHECK_NAME: 'login <flow>',
      RESULT_LINK: link,
      STARTED_AT: '2026-11-24T04:05:09.000Z',
      CHECK_ERROR_MESSAGE: 'expect(locator).toBeVisible() failed',
    });
    const result = await senders.EMAIL(n, to, providers(), never);
    expect(result.outcome).toBe('DELIVERED');
    const mail = peer.mails.at(-1)!;
    const html = mail.html ?? '';
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('max-width:600px');
    expect(html).toContain('Outpost alert');
    expect(html).toContain('login &#60;flow&#62; is failing in eu-west-1');
    expect(html).not.toContain('<flow>');
    expect(html).toContain('24 Nov 2026, 04:05:09 UTC');
    expect(html).not.toContain('2026-11-24T04:05:09');
    expect(html).toMatch(
      new RegExp(`<a href="${link}" style="display:inline-block[^"]*">View the result</a>`),
    );
    expect(html).toContain('The screenshot of the failure is on the result page');
    expect(html).toContain('Times are in UTC.');
    expect(mail.text).toContain('Started at: 24 Nov 2026, 04:05:09 UTC');
    expect(mail.text).toContain(`Screenshot of the failure: on the result page, ${link}`);
    expect(mail.text).toContain('Times are in UTC.');
  });

  it('no screenshot line for an API check or for a recovery; no result link when there is none', async () => {
    await senders.EMAIL(notification({ RESULT_LINK: link }), to, providers(), never);
    expect(peer.mails.at(-1)!.html).not.toContain('screenshot');
    expect(peer.mails.at(-1)!.html).toContain('View the result');

    await senders.EMAIL(
      notification({ CHECK_TYPE: 'BROWSER', ALERT_TYPE: 'ALERT_RECOVERY', RESULT_LINK: link }),
      to,
      providers(),
      never,
    );
    expect(peer.mails.at(-1)!.html).not.toContain('screenshot');

    await senders.EMAIL(
      notification({ ALERT_TYPE: 'ALERT_TEST', RESULT_LINK: null }),
      to,
      providers(),
      never,
    );
    const test = peer.mails.at(-1)!;
    expect(test.html).not.toContain('View the result');
    expect(test.html).toContain('This is a test notification sent from the channel settings.');
  });

  it('gives times in OUTPOST_TIME_ZONE, naming the zone; the start refuses a zone that does not exist', async () => {
    const inBerlin = providersFromEnv({
      OUTPOST_SMTP_URL: peer.url,
      OUTPOST_SMTP_FROM: 'Outpost <alerts@outpost.test>',
      OUTPOST_TIME_ZONE: 'Europe/Berlin',
    });
    await senders.EMAIL(notification({ STARTED_AT: '2026-11-24T04:05:09.000Z' }), to, inBerlin, never);
    const mail = peer.mails.at(-1)!;
    expect(mail.text).toContain('Started at: 24 Nov 2026, 05:05:09 CET');
    expect(mail.text).toContain('Times are in Europe/Berlin.');
    expect(mail.html).toContain('24 Nov 2026, 05:05:09 CET');
    // Summer time has its own name.
    await senders.EMAIL(notification({ STARTED_AT: '2026-07-01T12:00:00.000Z' }), to, inBerlin, never);
    expect(peer.mails.at(-1)!.text).toContain('Started at: 1 Jul 2026, 14:00:00 CEST');
    expect(() => parseServiceConfig({ OUTPOST_TIME_ZONE: 'Mars/Olympus_Mons' })).toThrow(
      /OUTPOST_TIME_ZONE must be an IANA time zone/,
    );
  });
});
