import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Job, MAX_ARTIFACT_SIZE_BYTES } from '../../../src/protocol/index.js';
import {
  fileArtifacts,
  apiBody,
  claimJobs,
  createCheck,
  repeatedBody,
  type TestService,
  testService,
  triggerCheck,
  resultFor,
} from '../../helpers/service.js';

let svc: TestService;
let agent: string;
let job: Job;
let checkId: string;
let sessionId: string;

beforeEach(async () => {
  svc = await testService();
  checkId = await createCheck(svc, 'api', apiBody({ doubleCheck: false }));
  sessionId = await triggerCheck(svc, checkId);
  agent = randomUUID();
  [job] = (await claimJobs(svc, agent)) as [Job];
});
afterEach(async () => svc.close());

const octets = { 'content-type': 'application/octet-stream' };
const upload = (
  name: string,
  payload: Buffer | Readable,
  headers: Record<string, string> = {},
  account: 'A' | 'B' = 'A',
  jobId = job.jobId,
) =>
  svc.app.inject({
    method: 'PUT',
    url: `/v1/agent/jobs/${jobId}/artifacts/${name}`,
    headers: { ...svc.auth(account), 'x-agent-id': agent, ...octets, ...headers },
    payload,
  });

const stored = (name: string) => join(fileArtifacts(svc).dir, svc.accountA.id, job.jobId, name);
const partials = () => {
  const dir = join(fileArtifacts(svc).dir, '.partial');
  return existsSync(dir) ? readdirSync(dir) : [];
};

/** Writes `head` on a raw connection and resolves with everything the server sent once it closes. */
function rawExchange(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer with the connection closed within 5 s; got ${JSON.stringify(data)}`));
    }, 5000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    socket.on('end', () => {
      clearTimeout(timer);
      resolve(data);
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

describe('PUT /v1/agent/jobs/{jobId}/artifacts/{name}', () => {
  it('stores the bytes, answers 201 with size and SHA-256, and users download them from the result', async () => {
    const bytes = randomBytes(300_000);
    const res = await upload('trace.zip', bytes);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({
      name: 'trace.zip',
      sizeBytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    expect(readFileSync(stored('trace.zip')).equals(bytes)).toBe(true);
    expect(partials()).toEqual([]);

    // After the result, the session lists the artifact and the download route serves it.
    const posted = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job.jobId}/result`,
      headers: { ...svc.auth(), 'x-agent-id': agent },
      payload: resultFor(job, 'PASSED', { artifacts: [{ name: 'trace.zip', sizeBytes: bytes.length }] }),
    });
    expect(posted.statusCode).toBe(200);
    const result = (await svc.request('GET', `/v1/check-sessions/${sessionId}`)).json().results[0];
    expect(result.artifacts).toEqual([{ name: 'trace.zip', sizeBytes: bytes.length }]);
    const url = `/v1/check-results/${checkId}/${result.id}/artifacts/trace.zip`;
    const download = await svc.request('GET', url);
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/octet-stream');
    expect(Number(download.headers['content-length'])).toBe(bytes.length);
    expect(download.rawPayload.equals(bytes)).toBe(true);

    // Once the job has ended nothing more is stored for it: not a new file, not a replacement.
    const again = randomBytes(10);
    const late = await upload('trace.zip', again);
    expect(late.statusCode).toBe(409);
    expect(late.json()).toMatchObject({
      statusCode: 409,
      error: 'Conflict',
      attributes: { code: 'OUTPOST_ERR_LEASE_LOST' },
    });
    expect((await upload('late.txt', again)).statusCode).toBe(409);
    expect((await svc.request('GET', url)).rawPayload.equals(bytes)).toBe(true);

    expect((await svc.request('GET', url, undefined, 'B')).statusCode).toBe(404);
    const missing = await svc.request('GET', `/v1/check-results/${checkId}/${result.id}/artifacts/other.png`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
    const wrongCheck = await svc.request(
      'GET',
      `/v1/check-results/${randomUUID()}/${result.id}/artifacts/trace.zip`,
    );
    expect(wrongCheck.statusCode).toBe(404);
  });

  it('streams a 150 MB upload over a real connection: exactly the limit is accepted', async () => {
    const address = await svc.app.listen({ port: 0, host: '127.0.0.1' });
    const total = MAX_ARTIFACT_SIZE_BYTES;
    const { body, sha256 } = repeatedBody(randomBytes(1024 * 1024), total);
    const res = await request(`${address}/v1/agent/jobs/${job.jobId}/artifacts/video.webm`, {
      method: 'PUT',
      headers: { ...svc.auth(), 'x-agent-id': agent, ...octets, 'content-length': String(total) },
      body,
    });
    expect(res.statusCode).toBe(201);
    expect(await res.body.json()).toEqual({
      name: 'video.webm',
      sizeBytes: total,
      sha256: sha256(),
    });
  });

  it('refuses a content-length over 150 MB with 413 before reading the body', async () => {
    const address = new URL(await svc.app.listen({ port: 0, host: '127.0.0.1' }));
    // Headers only: the server must answer (and close) without waiting for a single body byte.
    const raw = await rawExchange(
      Number(address.port),
      [
        `PUT /v1/agent/jobs/${job.jobId}/artifacts/huge.bin HTTP/1.1`,
        `host: ${address.host}`,
        `authorization: Bearer ${svc.accountA.key}`,
        `x-agent-id: ${agent}`,
        'content-type: application/octet-stream',
        `content-length: ${MAX_ARTIFACT_SIZE_BYTES + 1}`,
        '',
        '',
      ].join('\r\n'),
    );
    expect(raw).toMatch(/^HTTP\/1\.1 413 /);
    expect(raw.toLowerCase()).toContain('connection: close');
    expect(bodyOf(raw)).toEqual({
      statusCode: 413,
      error: 'Payload Too Large',
      message: expect.stringContaining('157286400'),
      attributes: {
        field: 'content-length',
        in: 'headers',
        code: 'OUTPOST_ERR_ARTIFACT_TOO_LARGE',
        limitBytes: MAX_ARTIFACT_SIZE_BYTES,
        contentLength: MAX_ARTIFACT_SIZE_BYTES + 1,
      },
    });
    expect(existsSync(stored('huge.bin'))).toBe(false);
  });

  it('refuses a body without content-length (chunked) with 411', async () => {
    const address = new URL(await svc.app.listen({ port: 0, host: '127.0.0.1' }));
    const raw = await rawExchange(
      Number(address.port),
      [
        `PUT /v1/agent/jobs/${job.jobId}/artifacts/chunked.bin HTTP/1.1`,
        `host: ${address.host}`,
        `authorization: Bearer ${svc.accountA.key}`,
        `x-agent-id: ${agent}`,
        'content-type: application/octet-stream',
        'transfer-encoding: chunked',
        '',
        '',
      ].join('\r\n'),
    );
    expect(raw).toMatch(/^HTTP\/1\.1 411 /);
    expect(bodyOf(raw)).toMatchObject({
      statusCode: 411,
      error: 'Length Required',
      attributes: { field: 'content-length', code: 'OUTPOST_ERR_LENGTH_REQUIRED' },
    });
    expect(existsSync(stored('chunked.bin'))).toBe(false);
  });

  it('refuses a body longer than its content-length mid-stream with 413 and keeps nothing', async () => {
    const res = await upload('long.bin', Readable.from([randomBytes(600), randomBytes(600)]), {
      'content-length': '1000',
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({
      statusCode: 413,
      error: 'Payload Too Large',
      attributes: { code: 'OUTPOST_ERR_ARTIFACT_TOO_LARGE', contentLength: 1000 },
    });
    expect(existsSync(stored('long.bin'))).toBe(false);
    expect(partials()).toEqual([]);
  });

  it('refuses a body shorter than its content-length with 400 and keeps nothing', async () => {
    const res = await upload('short.bin', Readable.from([randomBytes(500)]), { 'content-length': '1000' });
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toMatchObject({
      code: 'OUTPOST_ERR_ARTIFACT_INCOMPLETE',
      receivedBytes: 500,
    });
    expect(existsSync(stored('short.bin'))).toBe(false);
    expect(partials()).toEqual([]);
  });

  it('answers 404 for another account’s or an unknown job, 409 for another agent’s job', async () => {
    const bytes = randomBytes(16);
    const other = await upload('a.txt', bytes, {}, 'B');
    expect(other.statusCode).toBe(404);
    expect(other.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
    expect((await upload('a.txt', bytes, {}, 'A', randomUUID())).statusCode).toBe(404);
    const stranger = await svc.app.inject({
      method: 'PUT',
      url: `/v1/agent/jobs/${job.jobId}/artifacts/a.txt`,
      headers: { ...svc.auth(), 'x-agent-id': randomUUID(), ...octets },
      payload: bytes,
    });
    expect(stranger.statusCode).toBe(409);
    expect(stranger.json().attributes.code).toBe('OUTPOST_ERR_LEASE_LOST');
    expect(existsSync(stored('a.txt'))).toBe(false);
  });

  it.each(['.', 'a%2Fb', 'sp%20ace', 'x'.repeat(129)])('refuses the name %s with 400', async (name) => {
    const res = await upload(name, randomBytes(4));
    expect(res.statusCode).toBe(400);
    expect(res.json().attributes).toMatchObject({ field: 'name', in: 'params' });
    expect(readdirSync(fileArtifacts(svc).dir)).toEqual([]);
  });

  it('accepts a name of 128 characters', async () => {
    expect((await upload('x'.repeat(128), randomBytes(4))).statusCode).toBe(201);
  });

  it('refuses another content type with 415 and a missing agent id with 400', async () => {
    const json = await upload('a.json', Buffer.from('{}'), { 'content-type': 'application/json' });
    expect(json.statusCode).toBe(415);
    expect(json.json()).toMatchObject({
      error: 'Unsupported Media Type',
      attributes: { field: 'content-type' },
    });
    const noAgent = await svc.app.inject({
      method: 'PUT',
      url: `/v1/agent/jobs/${job.jobId}/artifacts/a.bin`,
      headers: { ...svc.auth(), ...octets },
      payload: randomBytes(4),
    });
    expect(noAgent.statusCode).toBe(400);
    expect(noAgent.json().attributes.field).toBe('x-agent-id');
  });
});
