import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  clientCertificateForHost,
  hostCandidates,
} from '../../../src/service/resources/client-certificates/client-certificates.js';
import { type TestService, testService } from '../../helpers/service.js';

/** PEM material made at test time with the openssl CLI (EC P-256: fast). */
type Pems = {
  cert: string;
  key: string;
  otherKey: string;
  encryptedKey: string;
  ca: string;
  rsaCert: string;
  rsaKey: string;
};

function makePems(): Pems {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-client-cert-'));
  try {
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    const selfSigned = (name: string, alg: string[]) =>
      openssl(
        'req',
        '-x509',
        ...alg,
        '-nodes',
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.crt`,
        '-subj',
        `/CN=${name}`,
        '-days',
        '2',
      );
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
    selfSigned('client', ec);
    selfSigned('other', ec);
    selfSigned('ca', ec);
    selfSigned('rsa', ['-newkey', 'rsa:2048']);
    openssl(
      'pkey',
      '-in',
      'client.key',
      '-aes256',
      '-passout',
      'pass:correct horse',
      '-out',
      'client-enc.key',
    );
    const read = (f: string) => readFileSync(join(dir, f), 'utf8');
    return {
      cert: read('client.crt'),
      key: read('client.key'),
      otherKey: read('other.key'),
      encryptedKey: read('client-enc.key'),
      ca: read('ca.crt'),
      rsaCert: read('rsa.crt'),
      rsaKey: read('rsa.key'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let svc: TestService;
let pem: Pems;
beforeAll(async () => {
  pem = makePems();
  svc = await testService();
});
afterAll(async () => svc.close());
beforeEach(async () => {
  await svc.context.db.deleteFrom('client_certificates').execute();
});

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, account: 'A' | 'B' = 'A') =>
  svc.app.inject({
    method,
    url,
    headers: svc.auth(account),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
const body = (over: Record<string, unknown> = {}) => ({
  host: 'api.example.com',
  cert: pem.cert,
  key: pem.key,
  ...over,
});
const create = (over: Record<string, unknown> = {}, account: 'A' | 'B' = 'A') =>
  call('POST', '/v1/client-certificates', body(over), account);

async function count(): Promise<number> {
  const row = await svc.context.db
    .selectFrom('client_certificates')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The base64 body of a PEM key: what must never appear in a response. */
const keyMaterial = (key: string) => key.split('\n').filter((l) => l && !l.startsWith('-----'))[0]!;

describe('POST /v1/client-certificates', () => {
  it('stores cert, key and CA and returns id, host, cert, ca, created_at — never the key', async () => {
    const res = await create({ ca: pem.ca });
    expect(res.statusCode).toBe(201);
    const cert = res.json();
    expect(Object.keys(cert).sort()).toEqual(['ca', 'cert', 'created_at', 'host', 'id']);
    expect(cert).toMatchObject({ host: 'api.example.com', cert: pem.cert, ca: pem.ca });
    expect(cert.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(cert.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(res.body).not.toContain(keyMaterial(pem.key));
    expect(res.body).not.toContain('PRIVATE KEY');
  });

  it('defaults ca to null, lower-cases the host, takes wildcards, RSA keys and encrypted keys', async () => {
    expect((await create()).json().ca).toBeNull();
    expect((await create({ host: 'API.Example.COM' })).json().host).toBe('api.example.com');
    expect((await create({ host: '*.example.com' })).statusCode).toBe(201);
    expect((await create({ host: 'localhost', cert: pem.rsaCert, key: pem.rsaKey })).statusCode).toBe(201);
    const encrypted = await create({ key: pem.encryptedKey, passphrase: 'correct horse' });
    expect(encrypted.statusCode).toBe(201);
    expect(encrypted.body).not.toContain('correct horse');
    expect(
      (await create({ host: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}` }))
        .statusCode,
    ).toBe(201);
  });

  const invalid: [string, () => Record<string, unknown>, string, string][] = [
    ['missing host', () => ({ host: undefined }), 'host', 'required'],
    ['missing cert', () => ({ cert: undefined }), 'cert', 'required'],
    ['missing key', () => ({ key: undefined }), 'key', 'required'],
    ['host with a scheme', () => ({ host: 'https://api.example.com' }), 'host', 'pattern'],
    ['host with a port', () => ({ host: 'api.example.com:443' }), 'host', 'pattern'],
    ['host with a path', () => ({ host: 'api.example.com/x' }), 'host', 'pattern'],
    ['wildcard in the middle', () => ({ host: 'api.*.example.com' }), 'host', 'pattern'],
    ['wildcard over a top-level domain', () => ({ host: '*.com' }), 'host', 'pattern'],
    ['bare wildcard', () => ({ host: '*' }), 'host', 'pattern'],
    [
      'host of 254 characters',
      () => ({ host: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}` }),
      'host',
      'maxLength',
    ],
    ['cert not PEM', () => ({ cert: 'hello' }), 'cert', 'pem'],
    [
      'cert with a corrupt body',
      () => ({ cert: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' }),
      'cert',
      'pem',
    ],
    ['a private key as cert', () => ({ cert: pem.key }), 'cert', 'pem'],
    ['cert of 65 537 characters', () => ({ cert: 'x'.repeat(65_537) }), 'cert', 'maxLength'],
    ['key not PEM', () => ({ key: 'not a key' }), 'key', 'pem'],
    ['a certificate as key', () => ({ key: pem.cert }), 'key', 'pem'],
    ["another certificate's key", () => ({ key: pem.otherKey }), 'key', 'keyMatch'],
    ['an encrypted key without passphrase', () => ({ key: pem.encryptedKey }), 'passphrase', 'required'],
    [
      'an encrypted key with a wrong passphrase',
      () => ({ key: pem.encryptedKey, passphrase: 'wrong' }),
      'passphrase',
      'passphrase',
    ],
    ['ca not PEM', () => ({ ca: 'nope' }), 'ca', 'pem'],
    [
      'ca with a corrupt second certificate',
      () => ({ ca: `${pem.ca}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n` }),
      'ca',
      'pem',
    ],
    ['unknown field', () => ({ port: 443 }), 'port', 'additionalProperties'],
  ];
  it.each(invalid)(
    'rejects %s with 400 naming the field and stores nothing',
    async (_name, over, field, rule) => {
      const res = await create(over());
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        statusCode: 400,
        error: 'Bad Request',
        attributes: { field, in: 'body', rule },
      });
      expect(res.body).not.toContain(keyMaterial(pem.key));
      expect(await count()).toBe(0);
    },
  );
});

describe('GET, list, DELETE /v1/client-certificates', () => {
  it('reads one certificate by id', async () => {
    const id = (await create({ ca: pem.ca })).json().id;
    const res = await call('GET', `/v1/client-certificates/${id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id,
      host: 'api.example.com',
      cert: pem.cert,
      ca: pem.ca,
      created_at: expect.any(String),
    });
    expect(res.body).not.toContain(keyMaterial(pem.key));
  });

  it('lists oldest first, 10 per page by default, with limit 1..100 and page', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 11; i++) ids.push((await create({ host: `h${i}.example.com` })).json().id);
    const all = (await call('GET', '/v1/client-certificates?limit=100')).json() as {
      id: string;
      created_at: string;
    }[];
    expect(all.map((c) => c.id).sort()).toEqual([...ids].sort());
    const times = all.map((c) => Date.parse(c.created_at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const page1 = await call('GET', '/v1/client-certificates');
    expect(page1.statusCode).toBe(200);
    expect(page1.json().map((c: { id: string }) => c.id)).toEqual(all.slice(0, 10).map((c) => c.id));
    expect(page1.body).not.toContain(keyMaterial(pem.key));
    const page2 = (await call('GET', '/v1/client-certificates?page=2')).json();
    expect(page2.map((c: { id: string }) => c.id)).toEqual([all[10]!.id]);
    expect((await call('GET', '/v1/client-certificates?limit=1&page=3')).json()[0].id).toBe(all[2]!.id);
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['page=0', 'page'],
    ] as const) {
      const res = await call('GET', `/v1/client-certificates?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().attributes).toMatchObject({ field, in: 'querystring' });
    }
  });

  it('deletes with 204; unknown ids are 404', async () => {
    const id = (await create()).json().id;
    const res = await call('DELETE', `/v1/client-certificates/${id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await call('GET', `/v1/client-certificates/${id}`)).statusCode).toBe(404);
    expect((await call('DELETE', `/v1/client-certificates/${id}`)).statusCode).toBe(404);
    expect(
      (await call('GET', '/v1/client-certificates/00000000-0000-0000-0000-000000000000')).statusCode,
    ).toBe(404);
  });

  it("keeps account B away from A's certificates (404, empty list)", async () => {
    const id = (await create()).json().id;
    expect((await call('GET', `/v1/client-certificates/${id}`, undefined, 'B')).statusCode).toBe(404);
    expect((await call('GET', '/v1/client-certificates', undefined, 'B')).json()).toEqual([]);
    expect((await call('DELETE', `/v1/client-certificates/${id}`, undefined, 'B')).statusCode).toBe(404);
    expect((await call('GET', `/v1/client-certificates/${id}`)).statusCode).toBe(200);
    expect(await clientCertificateForHost(svc.context.db, svc.accountB.id, 'api.example.com')).toBeNull();
  });
});

describe('clientCertificateForHost', () => {
  it('lists the candidate hosts: the name, then the one-label wildcard', () => {
    expect(hostCandidates('a.example.com')).toEqual(['a.example.com', '*.example.com']);
    expect(hostCandidates('A.Example.COM.')).toEqual(['a.example.com', '*.example.com']);
    expect(hostCandidates('localhost')).toEqual(['localhost']);
    expect(hostCandidates('10.0.0.1')).toEqual(['10.0.0.1']);
    expect(hostCandidates('[::1]')).toEqual(['::1']);
    expect(hostCandidates('')).toEqual([]);
  });

  const match: [string, string[], string | null][] = [
    ['a.example.com', ['a.example.com', '*.example.com'], 'a.example.com'],
    ['a.example.com', ['*.example.com'], '*.example.com'],
    ['A.EXAMPLE.com', ['*.example.com'], '*.example.com'],
    ['a.b.example.com', ['*.example.com'], null],
    ['a.b.example.com', ['*.example.com', '*.b.example.com'], '*.b.example.com'],
    ['example.com', ['*.example.com'], null],
    ['b.example.com', ['a.example.com'], null],
    ['example.com', ['example.com', '*.example.com'], 'example.com'],
    ['aexample.com', ['*.example.com'], null],
  ];
  it.each(match)('%s with stored %j uses %s', async (hostname, hosts, expected) => {
    for (const host of hosts) expect((await create({ host })).statusCode).toBe(201);
    const found = await clientCertificateForHost(svc.context.db, svc.accountA.id, hostname);
    expect(found?.host ?? null).toBe(expected);
  });

  it('returns the key, passphrase and CA for the job builder, and the newest certificate of a host', async () => {
    const older = (await create({ host: 'mtls.example.com', cert: pem.rsaCert, key: pem.rsaKey })).json();
    // Both may be created in the same millisecond: make the first one clearly older.
    await svc.context.db
      .updateTable('client_certificates')
      .set({ created_at: 0 })
      .where('id', '=', older.id)
      .execute();
    const newest = (
      await create({
        host: 'mtls.example.com',
        key: pem.encryptedKey,
        passphrase: 'correct horse',
        ca: pem.ca,
      })
    ).json();
    expect(await clientCertificateForHost(svc.context.db, svc.accountA.id, 'mtls.example.com')).toEqual({
      id: newest.id,
      host: 'mtls.example.com',
      cert: pem.cert,
      key: pem.encryptedKey,
      passphrase: 'correct horse',
      ca: pem.ca,
    });
  });
});
