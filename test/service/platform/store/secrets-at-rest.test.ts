import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQLite } from '../../../../src/service/platform/store/sqlite.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../../../src/protocol/index.js';
import { PROTOCOL_VERSION } from '../../../../src/protocol/index.js';
import { generateApiKey } from '../../../../src/service/platform/http/auth.js';
import { parseServiceConfig } from '../../../../src/service/config.js';
import { type RunningService, startService } from '../../../../src/service/main.js';
import { KEY_FILE_NAME } from '../../../../src/service/platform/store/secret-box.js';
import { hasCode } from '../../../../src/common/errors.js';
import { CLI } from '../../../helpers/cli.js';

/** A secret with characters that JSON escapes or encodes differently (quote, <, non-ASCII). */
function secret(label: string): string {
  return `${label}-${randomBytes(9).toString('hex')}"<é>`;
}

/** Every form a secret could be stored in: plain, JSON-escaped (both ways), base64 at each alignment, hex. */
function encodings(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const forms = new Set<string>([
    value,
    JSON.stringify(value).slice(1, -1),
    JSON.stringify(value)
      .slice(1, -1)
      .replace(/[<>&\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    // The part of a secret that does not depend on its neighbours: letters and digits only.
    value.replace(/[^A-Za-z0-9-]/g, '').slice(0, 20),
  ]);
  for (let offset = 0; offset < 3; offset++) {
    const b64 = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    forms.add(b64.slice(4, -4));
    forms.add(
      Buffer.concat([Buffer.alloc(offset), bytes])
        .toString('base64url')
        .slice(4, -4),
    );
  }
  return [...forms].filter((f) => f.length >= 8);
}

/** The store's files as bytes (the database, its WAL and shared memory, when present). */
function storeBytes(dataDir: string): Buffer {
  return Buffer.concat(
    ['outpost.db', 'outpost.db-wal', 'outpost.db-shm']
      .map((f) => join(dataDir, f))
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f)),
  );
}

/** The secrets in `planted` found in the store's bytes, with the form found. */
function leaks(dataDir: string, planted: Record<string, string>): string[] {
  const bytes = storeBytes(dataDir);
  const found: string[] = [];
  for (const [name, value] of Object.entries(planted)) {
    for (const form of encodings(value)) {
      if (bytes.includes(Buffer.from(form, 'utf8')) || bytes.includes(Buffer.from(form, 'utf16le'))) {
        found.push(`${name} as ${JSON.stringify(form)}`);
      }
    }
  }
  return found;
}

/** PEM client certificate with a passphrase-encrypted key, made with the openssl CLI. */
function clientCertificate(passphrase: string): { cert: string; key: string; keyBody: string } {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-secret-cert-'));
  try {
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'c.key',
      '-out',
      'c.crt',
      '-subj',
      '/CN=mtls.test',
      '-days',
      '2',
    );
    openssl('pkcs8', '-topk8', '-in', 'c.key', '-out', 'e.key', '-passout', `pass:${passphrase}`);
    const key = readFileSync(join(dir, 'e.key'), 'utf8');
    const keyBody = key.split('\n').filter((l) => l && !l.startsWith('-----'))[1]!;
    return { cert: readFileSync(join(dir, 'c.crt'), 'utf8'), key, keyBody };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('secrets at rest', () => {
  const apiKey = generateApiKey();
  const dataDir = mkdtempSync(join(tmpdir(), 'outpost-secrets-'));
  const passphrase = secret('passphrase').replace(/[^A-Za-z0-9-]/g, '');
  const pem = clientCertificate(passphrase);
  const planted = {
    accountVariable: secret('account-var'),
    checkVariable: secret('check-var'),
    groupVariable: secret('group-var'),
    authorization: secret('bearer'),
    cookie: secret('cookie'),
    apiKeyHeader: secret('x-api-key'),
    customTokenHeader: secret('custom-token'),
    basicAuthPassword: secret('basic'),
    groupAuthorization: secret('group-bearer'),
    groupPassword: secret('group-basic'),
    webhookSecret: secret('webhook-secret'),
    webhookAuthorization: secret('webhook-bearer'),
    pagerDutyKey: secret('pd-key'),
    opsgenieKey: secret('og-key'),
    certificatePassphrase: passphrase,
    certificateKey: pem.keyBody,
  };
  let running: RunningService;
  let checkId: string;
  let groupId: number;
  let webhookId: number;

  const start = (env: Record<string, string> = {}) =>
    startService(
      parseServiceConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        OUTPOST_DATA_DIR: dataDir,
        OUTPOST_API_KEY: apiKey,
        ...env,
      }),
      { log: pino({ level: 'silent' }) },
    );
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${running.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, json: text ? JSON.parse(text) : null };
  };
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await call(method, path, body);
    expect(res.status, res.text).toBeLessThan(300);
    return res.json;
  };
  /** Triggers the check and claims its job as an agent would. */
  const jobOfCheck = async (): Promise<Job> => {
    await ok('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    const res = await fetch(`${running.url}/v1/agent/jobs/claim`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'x-agent-id': randomUUID(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        agentVersion: '0.0.0-test',
        protocolVersion: PROTOCOL_VERSION,
        checkTypes: ['API'],
        runtimes: ['2026.04'],
        freeSlots: { uptime: 10, main: 10 },
        waitSeconds: 0,
      }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const { jobs } = JSON.parse(text) as { jobs: Job[] };
    expect(jobs).toHaveLength(1);
    return jobs[0]!;
  };
  /** What the agent must receive: every planted secret in clear. */
  const expectPlaintextJob = (job: Job) => {
    const request = job.check.request as {
      headers: { key: string; value: string }[];
      basicAuth: { password: string } | null;
    };
    const header = (name: string) => request.headers.find((h) => h.key.toLowerCase() === name)?.value;
    expect(header('authorization')).toBe(`Bearer ${planted.authorization}`);
    expect(header('cookie')).toBe(`sid=${planted.cookie}`);
    expect(header('x-api-key')).toBe(planted.apiKeyHeader);
    expect(header('x-custom-token')).toBe(planted.customTokenHeader);
    expect(request.basicAuth?.password).toBe(planted.basicAuthPassword);
    const vars = Object.fromEntries(job.environmentVariables.map((v) => [v.key, v.value]));
    expect(vars).toMatchObject({
      ACCOUNT_SECRET: planted.accountVariable,
      CHECK_SECRET: planted.checkVariable,
      GROUP_SECRET: planted.groupVariable,
    });
    expect(job.clientCertificate).toMatchObject({ key: pem.key, passphrase: planted.certificatePassphrase });
  };

  beforeAll(async () => {
    running = await start();
    await ok('POST', '/v1/variables', {
      key: 'ACCOUNT_SECRET',
      value: planted.accountVariable,
      secret: true,
    });
    await ok('POST', '/v1/client-certificates', {
      host: 'mtls.test',
      cert: pem.cert,
      key: pem.key,
      passphrase: planted.certificatePassphrase,
    });
    groupId = (
      await ok('POST', '/v1/check-groups', {
        name: 'secrets',
        activated: true,
        apiCheckDefaults: {
          headers: [{ key: 'Authorization', value: planted.groupAuthorization }],
          basicAuth: { username: 'g', password: planted.groupPassword },
        },
        environmentVariables: [{ key: 'GROUP_SECRET', value: planted.groupVariable, secret: true }],
      })
    ).id;
    checkId = (
      await ok('POST', '/v1/checks/api', {
        name: 'secret api',
        activated: false,
        groupId,
        request: {
          method: 'GET',
          url: 'https://mtls.test/',
          headers: [
            { key: 'Authorization', value: `Bearer ${planted.authorization}` },
            { key: 'Cookie', value: `sid=${planted.cookie}` },
            { key: 'X-Api-Key', value: planted.apiKeyHeader },
            { key: 'X-Custom-Token', value: planted.customTokenHeader },
            { key: 'X-Ref', value: '{{ACCOUNT_SECRET}}' },
            { key: 'Accept', value: 'application/json' },
          ],
          basicAuth: { username: 'u', password: planted.basicAuthPassword },
        },
        environmentVariables: [{ key: 'CHECK_SECRET', value: planted.checkVariable, secret: true }],
      })
    ).id;
    webhookId = (
      await ok('POST', '/v1/alert-channels', {
        type: 'WEBHOOK',
        config: {
          name: 'hook',
          url: 'https://hooks.test/x',
          webhookSecret: planted.webhookSecret,
          headers: [{ key: 'Authorization', value: `Bearer ${planted.webhookAuthorization}` }],
        },
      })
    ).id;
    await ok('POST', '/v1/alert-channels', {
      type: 'PAGERDUTY',
      config: { serviceKey: planted.pagerDutyKey },
    });
    await ok('POST', '/v1/alert-channels', {
      type: 'OPSGENIE',
      config: { name: 'og', apiKey: planted.opsgenieKey, region: 'EU', priority: 'P1' },
    });
  });
  afterAll(async () => {
    await running?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps no planted secret in the SQLite file or its WAL, in any encoding', async () => {
    // While running (recent writes in the WAL) and after a clean stop (checkpointed into the file).
    expect(existsSync(join(dataDir, 'outpost.db-wal'))).toBe(true);
    expect(leaks(dataDir, planted)).toEqual([]);
    await running.stop();
    expect(leaks(dataDir, planted)).toEqual([]);
    running = await start();
  });

  it('creates the key file with mode 0600 and reads the same key at the next start', async () => {
    expect(statSync(join(dataDir, KEY_FILE_NAME)).mode & 0o777).toBe(0o600);
    // The restart in the test above opened every secret with the key file: they still reach the agent.
    const variable = await ok('GET', '/v1/variables/ACCOUNT_SECRET');
    expect(variable.value).toBe('*****');
  });

  it('answers no secret in any read, and a bare {{VARIABLE}} reference stays visible', async () => {
    const reads = [
      await call('GET', `/v1/checks/${checkId}`),
      await call('GET', '/v1/checks'),
      await call('GET', `/v1/check-groups/${groupId}`),
      await call('GET', '/v1/check-groups'),
      await call('GET', '/v1/alert-channels'),
      await call('GET', `/v1/alert-channels/${webhookId}`),
      await call('GET', '/v1/variables'),
      await call('GET', '/v1/client-certificates'),
    ];
    for (const read of reads) {
      expect(read.status).toBe(200);
      for (const [name, value] of Object.entries(planted)) {
        for (const form of encodings(value)) expect(read.text, name).not.toContain(form);
      }
    }
    const check = reads[0]!.json;
    expect(check.request.headers).toEqual([
      { key: 'Authorization', value: '*****' },
      { key: 'Cookie', value: '*****' },
      { key: 'X-Api-Key', value: '*****' },
      { key: 'X-Custom-Token', value: '*****' },
      { key: 'X-Ref', value: '{{ACCOUNT_SECRET}}' },
      { key: 'Accept', value: 'application/json' },
    ]);
    expect(check.request.basicAuth).toEqual({ username: 'u', password: '*****' });
    expect(reads[2]!.json.apiCheckDefaults.headers).toEqual([{ key: 'Authorization', value: '*****' }]);
    expect(reads[2]!.json.apiCheckDefaults.basicAuth).toEqual({ username: 'g', password: '*****' });
    expect(reads[5]!.json.config).toMatchObject({
      webhookSecret: '*****',
      headers: [{ key: 'Authorization', value: '*****' }],
    });
  });

  it('hands the agent every secret in clear through the job builder', async () => {
    expectPlaintextJob(await jobOfCheck());
  });

  it('keeps every stored secret when a read body is sent back (GET → PUT) for checks, groups, channels, variables', async () => {
    const check = await ok('GET', `/v1/checks/${checkId}`);
    const { id: _c, created_at: _cc, updated_at: _cu, alertChannels: _ca, ...checkBody } = check;
    // The spec's update body requires `heartbeat` and `script`, which a check read does not carry.
    await ok('PUT', `/v1/checks/${checkId}`, { ...checkBody, heartbeat: {}, script: null });
    const group = await ok('GET', `/v1/check-groups/${groupId}`);
    const { id: _g, created_at: _gc, updated_at: _gu, ...groupBody } = group;
    await ok('PUT', `/v1/check-groups/${groupId}`, groupBody);
    const channel = await ok('GET', `/v1/alert-channels/${webhookId}`);
    await ok('PUT', `/v1/alert-channels/${webhookId}`, { config: channel.config });
    const variable = await ok('GET', '/v1/variables/ACCOUNT_SECRET');
    await ok('PUT', '/v1/variables/ACCOUNT_SECRET', { value: variable.value, secret: true });

    // Nothing stored the mask: the agent still gets the real values, and the file still holds none in clear.
    const job = await jobOfCheck();
    expectPlaintextJob(job);
    expect(JSON.stringify(job)).not.toContain('*****');
    const stored = new SQLite(join(dataDir, 'outpost.db'), { readonly: true });
    try {
      const channelDoc = JSON.parse(
        (stored.prepare('SELECT doc FROM alert_channels WHERE id = ?').get(webhookId) as { doc: string }).doc,
      );
      expect(channelDoc.config.webhookSecret).toMatch(/^v1:/);
      expect(channelDoc.config.headers[0].value).toMatch(/^v1:/);
    } finally {
      stored.close();
    }
  });

  it('a new value replaces a masked secret and a removed header is gone', async () => {
    const check = await ok('GET', `/v1/checks/${checkId}`);
    const headers = (check.request.headers as { key: string; value: string }[])
      .filter((h) => h.key !== 'Cookie')
      .map((h) => (h.key === 'X-Api-Key' ? { ...h, value: 'rotated-key-value' } : h));
    await ok('PUT', `/v1/checks/${checkId}`, {
      request: { ...check.request, headers },
      heartbeat: {},
      script: null,
    });
    await ok('POST', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } });
    const res = await fetch(`${running.url}/v1/agent/jobs/claim`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'x-agent-id': randomUUID(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        agentVersion: '0.0.0-test',
        protocolVersion: PROTOCOL_VERSION,
        checkTypes: ['API'],
        runtimes: ['2026.04'],
        freeSlots: { uptime: 10, main: 10 },
        waitSeconds: 0,
      }),
    });
    const job = ((await res.json()) as { jobs: Job[] }).jobs[0]!;
    const sent = (job.check.request as { headers: { key: string; value: string }[] }).headers;
    expect(sent.find((h) => h.key === 'X-Api-Key')?.value).toBe('rotated-key-value');
    expect(sent.find((h) => h.key === 'Authorization')?.value).toBe(`Bearer ${planted.authorization}`);
    expect(sent.some((h) => h.key === 'Cookie')).toBe(false);
  });

  it('refuses to start with another key, with a clear error and never a wrong value', async () => {
    await running.stop();
    const other = randomBytes(32).toString('base64');
    const err = await start({ OUTPOST_ENCRYPTION_KEY: other }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(hasCode(err, 'OUTPOST_ERR_ENCRYPTION_KEY')).toBe(true);
    expect((err as Error).message).toMatch(/OUTPOST_ENCRYPTION_KEY/);
    expect((err as Error).message).not.toContain('\n');
    running = await start();
  });

  it('refuses to start when the key file is readable by others, naming the file', async () => {
    await running.stop();
    const file = join(dataDir, KEY_FILE_NAME);
    chmodSync(file, 0o644);
    try {
      const err = await start().then(
        () => null,
        (e: unknown) => e,
      );
      expect(hasCode(err, 'OUTPOST_ERR_ENCRYPTION_KEY')).toBe(true);
      expect((err as Error).message).toContain(file);
    } finally {
      chmodSync(file, 0o600);
    }
    running = await start();
  });
});

describe('OUTPOST_ENCRYPTION_KEY', () => {
  it.each([
    ['too short', randomBytes(16).toString('base64')],
    ['not base64 or hex', 'x'.repeat(44)],
    ['31 bytes of hex', randomBytes(31).toString('hex')],
  ])('is a configuration error naming the variable when %s, without echoing the value', (_n, value) => {
    let err: unknown;
    try {
      parseServiceConfig({ OUTPOST_ENCRYPTION_KEY: value });
    } catch (e) {
      err = e;
    }
    expect(hasCode(err, 'OUTPOST_ERR_CONFIG')).toBe(true);
    expect((err as Error).message).toContain('OUTPOST_ENCRYPTION_KEY');
    expect((err as Error).message).not.toContain(value);
  });

  it('accepts 32 bytes as base64 or hex', () => {
    const key = randomBytes(32);
    expect(parseServiceConfig({ OUTPOST_ENCRYPTION_KEY: key.toString('base64') }).encryptionKey).toEqual(key);
    expect(parseServiceConfig({ OUTPOST_ENCRYPTION_KEY: key.toString('hex') }).encryptionKey).toEqual(key);
  });
});

describe('a store written in clear by an older version', () => {
  it('is sealed at start-up, idempotently, and leaves no clear copy in the file', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'outpost-legacy-'));
    const apiKey = generateApiKey();
    const key = randomBytes(32).toString('hex');
    const start = () =>
      startService(
        parseServiceConfig({
          PORT: '0',
          OUTPOST_DATA_DIR: dataDir,
          OUTPOST_API_KEY: apiKey,
          OUTPOST_ENCRYPTION_KEY: key,
        }),
        { log: pino({ level: 'silent' }) },
      );
    let running = await start();
    try {
      const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
      const post = (path: string, body: unknown) =>
        fetch(`${running.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) =>
          r.json(),
        );
      const check = (await post('/v1/checks/api', {
        name: 'legacy',
        activated: false,
        request: {
          method: 'GET',
          url: 'https://legacy.test/',
          headers: [{ key: 'Authorization', value: 'x' }],
        },
      })) as { id: string };
      await post('/v1/variables', { key: 'OLD', value: 'x', secret: true });
      await running.stop();

      // What an older version wrote: the secrets in clear.
      const legacy = { variable: secret('legacy-var'), header: secret('legacy-header') };
      const db = new SQLite(join(dataDir, 'outpost.db'));
      db.prepare("UPDATE variables SET value = ? WHERE key = 'OLD'").run(legacy.variable);
      const row = db.prepare('SELECT doc FROM checks WHERE id = ?').get(check.id) as { doc: string };
      const doc = JSON.parse(row.doc);
      doc.request.headers[0].value = legacy.header;
      db.prepare('UPDATE checks SET doc = ? WHERE id = ?').run(JSON.stringify(doc), check.id);
      db.close();
      expect(leaks(dataDir, legacy).length).toBeGreaterThan(0);

      running = await start();
      expect(leaks(dataDir, legacy)).toEqual([]);
      const got = (await fetch(`${running.url}/v1/checks/${check.id}`, { headers }).then((r) =>
        r.json(),
      )) as {
        request: { headers: { value: string }[] };
      };
      expect(got.request.headers[0]!.value).toBe('*****');
      await running.stop();
      // A second start finds everything sealed and still opens it.
      running = await start();
      const file = new SQLite(join(dataDir, 'outpost.db'), { readonly: true });
      const value = (file.prepare("SELECT value FROM variables WHERE key = 'OLD'").get() as { value: string })
        .value;
      file.close();
      expect(value).toMatch(/^v1:/);
    } finally {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('`outpost service` with an unusable key', () => {
  it.each([
    ['a key file readable by others', 0o644, {}],
    [
      'another OUTPOST_ENCRYPTION_KEY than the store was written with',
      0o600,
      { OUTPOST_ENCRYPTION_KEY: 'other' },
    ],
  ])('ends with one line naming the cause, exit 2 and no stack trace (%s)', async (_name, mode, extra) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'outpost-key-cli-'));
    const apiKey = generateApiKey();
    try {
      // A store holding a sealed secret, written with the key file.
      const running = await startService(
        parseServiceConfig({ PORT: '0', OUTPOST_DATA_DIR: dataDir, OUTPOST_API_KEY: apiKey }),
        { log: pino({ level: 'silent' }) },
      );
      await fetch(`${running.url}/v1/variables`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ key: 'S', value: 'sealed-value', secret: true }),
      });
      await running.stop();
      chmodSync(join(dataDir, KEY_FILE_NAME), mode);
      const env: Record<string, string> = {
        ...(process.env as Record<string, string>),
        PORT: '0',
        OUTPOST_DATA_DIR: dataDir,
        ...('OUTPOST_ENCRYPTION_KEY' in extra
          ? { OUTPOST_ENCRYPTION_KEY: randomBytes(32).toString('base64') }
          : {}),
      };
      const run = spawnSync(process.execPath, [CLI, 'service'], { env, encoding: 'utf8', timeout: 20_000 });
      expect(run.status, run.stderr).toBe(2);
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(mode === 0o644 ? /encryption\.key has mode 0644/ : /OUTPOST_ENCRYPTION_KEY/);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
