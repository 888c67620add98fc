/**
 * Status-page subscriber mail survives a crash of the service: `outpost service` (a real process, its
 * SQLite file store in a temp folder) queues one mail per confirmed subscriber (50) when an incident
 * update with notifySubscribers is posted, and sends them to an SMTP server on loopback that answers each
 * mail's data slowly; it is SIGKILLed while mails are in flight and started again on the same folder.
 * Every subscriber must then have exactly one mail of that update, counted by Message-ID (a mail whose
 * data arrived but whose answer the dead process never read is sent again with the same Message-ID, as
 * a receiver dedupes), and every notification must end DELIVERED. Needs the build (dist/src/cli.js).
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { messageIdOf } from '../../src/service/alerting/channels/email.js';
import { SQLite } from '../../src/service/platform/store/sqlite.js';
import { apiClient, type CliProcess, freePort, spawnCli, stopCli } from '../helpers/cli.js';
import { until } from '../helpers/processes.js';

const API_KEY = 'status_page_subscriptions_crash_key_0123456789';
/** Confirmed subscribers of the page: each gets one mail of the update. */
const SUBSCRIBERS = 50;
/** Mails whose data arrived before the kill: past the first wave (16 at once), with more in flight. */
const SEEN_BEFORE_KILL = 20;
/** 300–800 ms before each mail's data is answered, varied so sends finish out of step. */
const answerDelayMs = (n: number) => 300 + ((n * 137) % 500);

/** A mail whose data the server received; `answeredAtMs` null until its 250 was written. */
type StalledMail = { to: string[]; messageId: string; answeredAtMs: number | null };

/** An SMTP server on 127.0.0.1 that answers each mail's data after answerDelayMs. */
async function startStallingSmtp(): Promise<{ url: string; mails: StalledMail[]; close(): Promise<void> }> {
  const mails: StalledMail[] = [];
  // Connections the client closed (or a kill dropped): an answer written to them is never read.
  const closed = new Set<string>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onClose(session) {
      closed.add(session.id);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const head = raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');
        const messageId = /^message-id:\s*(.+)$/im.exec(head)?.[1]?.trim() ?? '';
        const mail: StalledMail = {
          to: session.envelope.rcptTo.map((r) => r.address),
          messageId,
          answeredAtMs: null,
        };
        const n = mails.length;
        mails.push(mail);
        setTimeout(() => {
          if (!closed.has(session.id)) mail.answeredAtMs = Date.now();
          callback();
        }, answerDelayMs(n));
      });
    },
  });
  // The kill resets the service's connections: expected here, not a failure of the server.
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ECONNRESET') throw err;
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let service: CliProcess | undefined;
let smtp: Awaited<ReturnType<typeof startStallingSmtp>> | undefined;
let dataDir: string | undefined;

afterEach(async () => {
  await stopCli(service);
  service = undefined;
  await smtp?.close();
  smtp = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

describe('status-page subscriber mail across a crash of the service', () => {
  it('SIGKILL with mails in flight: after a restart every subscriber has exactly one mail of the update (by Message-ID), every notification DELIVERED', async () => {
    const t0 = performance.now();
    const stamp = (what: string) => console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s: ${what}`);
    dataDir = mkdtempSync(join(tmpdir(), 'outpost-e2e-subscriptions-'));
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const api = apiClient(baseUrl, API_KEY);
    const rx = await startStallingSmtp();
    smtp = rx;
    const start = async () => {
      const p = spawnCli(['service'], {
        PORT: String(port),
        OUTPOST_DATA_DIR: dataDir!,
        OUTPOST_API_KEY: API_KEY,
        OUTPOST_SMTP_URL: rx.url,
        OUTPOST_SMTP_FROM: 'status@example.test',
        OUTPOST_APP_URL: 'https://status.example.test',
        LOG_LEVEL: 'WARN',
      });
      service = p;
      await p.waitFor(/service is listening/, 20_000);
      return p;
    };
    const dbFile = join(dataDir, 'outpost.db');

    await start();
    const svc = await api('POST', '/v1/status-pages/services', { name: 'API' });
    expect(svc.status).toBe(201);
    const page = await api('POST', '/v1/status-pages', {
      name: 'Crash test',
      url: `crash-${randomUUID().slice(0, 8)}`,
      cards: [{ name: 'Core', services: [{ id: svc.json.id }] }],
    });
    expect(page.status).toBe(201);
    // Subscribers confirmed through the store (the subscribe form allows 10 a minute per address).
    await stopCli(service);
    const subscribers = Array.from({ length: SUBSCRIBERS }, (_, i) => ({
      id: randomUUID(),
      email: `subscriber-${i}@example.test`,
    }));
    const writer = new SQLite(dbFile);
    try {
      const insert = writer.prepare(
        `INSERT INTO status_page_subscribers
           (id, account_id, status_page_id, email, service_ids, created_at, confirmed_at, confirmation_sent_at)
         VALUES (?, ?, ?, ?, NULL, ?, ?, ?)`,
      );
      const now = Date.now();
      for (const s of subscribers)
        insert.run(s.id, page.json.accountId, page.json.id, s.email, now, now, now);
    } finally {
      writer.close();
    }

    const first = await start();
    stamp('service started with 50 confirmed subscribers');
    const incident = await api('POST', '/v1/incidents', {
      name: 'Everything is slow',
      impact: 'MAJOR',
      services: [{ id: svc.json.id }],
      incidentUpdates: [
        { status: 'INVESTIGATING', description: 'Looking into it.', notifySubscribers: true },
      ],
    });
    expect(incident.status).toBe(201);
    const updateId: string = incident.json.incidentUpdates[0].id;
    const expected = new Map(subscribers.map((s) => [s.email, messageIdOf(`sp:${s.id}:${updateId}`)]));

    await until('mails before the kill', () => rx.mails.length >= SEEN_BEFORE_KILL, 20_000);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await new Promise((r) => setTimeout(r, 100));
    const beforeRestart = rx.mails.length;
    const cut = rx.mails.filter((m) => m.answeredAtMs === null).map((m) => m.messageId);
    stamp(`SIGKILL after ${beforeRestart} mails (${cut.length} received and not answered)`);
    expect(cut.length).toBeGreaterThan(0);
    expect(beforeRestart).toBeLessThan(SUBSCRIBERS);

    const store = new SQLite(dbFile, { readonly: true });
    let sendingAtKill: number;
    try {
      const rows = store
        .prepare(
          'SELECT subscriber_id, idempotency_key, alert_type FROM alert_notifications WHERE subscriber_id IS NOT NULL',
        )
        .all() as { subscriber_id: string; idempotency_key: string; alert_type: string }[];
      expect(rows).toHaveLength(SUBSCRIBERS);
      expect(new Set(rows.map((r) => r.alert_type))).toEqual(new Set(['STATUS_PAGE_UPDATE']));
      expect(new Set(rows.map((r) => r.idempotency_key))).toEqual(
        new Set(subscribers.map((s) => `sp:${s.id}:${updateId}`)),
      );
      sendingAtKill = Number(
        (
          store.prepare("SELECT count(*) AS n FROM alert_notifications WHERE state = 'SENDING'").get() as {
            n: number;
          }
        ).n,
      );
    } finally {
      store.close();
    }
    expect(sendingAtKill).toBeGreaterThan(0);

    await start();
    stamp(`restarted (${sendingAtKill} mails were SENDING at the kill)`);
    const answeredTo = () => new Set(rx.mails.filter((m) => m.answeredAtMs !== null).flatMap((m) => m.to));
    await until(
      'every subscriber mailed',
      () => [...expected.keys()].every((e) => answeredTo().has(e)),
      30_000,
    );
    // Sends cut by the kill come again; let any straggler arrive before counting.
    await until(
      'every cut mail sent again',
      () => cut.every((id) => rx.mails.slice(beforeRestart).some((m) => m.messageId === id)),
      15_000,
    );
    await new Promise((r) => setTimeout(r, 1500));
    stamp(`all ${SUBSCRIBERS} subscribers mailed (${rx.mails.length} mails received)`);

    for (const [email, messageId] of expected) {
      const ids = new Set(rx.mails.filter((m) => m.to.includes(email)).map((m) => m.messageId));
      expect([...ids], email).toEqual([messageId]);
    }
    const repeats = rx.mails.length - SUBSCRIBERS;
    console.log(`mails received twice (same Message-ID): ${repeats}; cut by the kill: ${cut.length}`);
    // Only a send the dead process had started is sent again.
    expect(repeats).toBeLessThanOrEqual(sendingAtKill);
    for (const id of cut) expect(rx.mails.filter((m) => m.messageId === id).length, id).toBe(2);

    // Every notification recorded as delivered (read after a graceful stop).
    await until(
      'every notification DELIVERED',
      () => {
        const db = new SQLite(dbFile, { readonly: true });
        try {
          const open = db
            .prepare(
              "SELECT count(*) AS n FROM alert_notifications WHERE subscriber_id IS NOT NULL AND state != 'DELIVERED'",
            )
            .get() as { n: number };
          return Number(open.n) === 0;
        } finally {
          db.close();
        }
      },
      10_000,
    );
    await stopCli(service);
    expect(await service!.exited).toBe(0);
  }, 90_000);
});
