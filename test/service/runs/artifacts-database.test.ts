import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Job, MAX_ARTIFACT_SIZE_BYTES } from '../../../src/protocol/index.js';
import { build, type Service } from '../../../src/service/app.js';
import { retentionTasks } from '../../../src/service/modules.js';
import { RetentionWorker } from '../../../src/service/platform/store/retention.js';
import {
  ARTIFACT_CHUNK_BYTES,
  DatabaseArtifactStore,
  ORPHAN_CHUNK_AGE_MS,
} from '../../../src/service/runs/artifacts/database-store.js';
import {
  apiBody,
  claimJobs,
  createCheck,
  repeatedBody,
  resultFor,
  type TestService,
  testService,
  triggerCheck,
} from '../../helpers/service.js';

// Issue 25: replicas share no disk, so on PostgreSQL artifacts are rows of the store (OUTPOST_ARTIFACT_STORE=
// database): an artifact uploaded through one replica downloads through any other.

let svc: TestService;
let other: Service | undefined;
let otherDir: string | undefined;
let agent: string;
let job: Job;
let checkId: string;
let sessionId: string;

beforeEach(async () => {
  svc = await testService({ artifactStore: 'database' });
  checkId = await createCheck(svc, 'api', apiBody({ doubleCheck: false }));
  sessionId = await triggerCheck(svc, checkId);
  agent = randomUUID();
  [job] = (await claimJobs(svc, agent)) as [Job];
});
afterEach(async () => {
  await other?.close();
  other = undefined;
  if (otherDir) await rm(otherDir, { recursive: true, force: true });
  await svc.close();
});

const octets = { 'content-type': 'application/octet-stream' };
const upload = (name: string, payload: Buffer | Readable, headers: Record<string, string> = {}) =>
  svc.app.inject({
    method: 'PUT',
    url: `/v1/agent/jobs/${job.jobId}/artifacts/${name}`,
    headers: { ...svc.auth(), 'x-agent-id': agent, ...octets, ...headers },
    payload,
  });

const rows = async () => ({
  artifacts: (await svc.context.db.selectFrom('artifacts').selectAll().execute()).length,
  chunks: (await svc.context.db.selectFrom('artifact_chunks').selectAll().execute()).length,
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('artifacts in the database', () => {
  it('stores an upload in 1 MiB chunks, and a second service on the same store serves it: no file anywhere', async () => {
    const bytes = randomBytes(3 * ARTIFACT_CHUNK_BYTES + 12_345);
    const res = await upload('trace.zip', bytes);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ name: 'trace.zip', sizeBytes: bytes.length, sha256: sha256(bytes) });
    expect(await rows()).toEqual({ artifacts: 1, chunks: 4 });
    const posted = await svc.app.inject({
      method: 'POST',
      url: `/v1/agent/jobs/${job.jobId}/result`,
      headers: { ...svc.auth(), 'x-agent-id': agent },
      payload: resultFor(job, 'PASSED', { artifacts: [{ name: 'trace.zip', sizeBytes: bytes.length }] }),
    });
    expect(posted.statusCode).toBe(200);
    const result = (await svc.request('GET', `/v1/check-sessions/${sessionId}`)).json().results[0];
    const path = `/v1/check-results/${checkId}/${result.id}/artifacts/trace.zip`;

    // Another replica: its own process state and artifacts folder, the same store.
    otherDir = await mkdtemp(join(tmpdir(), 'outpost-other-replica-'));
    other = await build({
      db: svc.context.db,
      log: pino({ level: 'silent' }),
      artifactsDir: otherDir,
      artifactStore: 'database',
      retention: false,
    });
    const address = await other.app.listen({ port: 0, host: '127.0.0.1' });
    const download = await request(`${address}${path}`, { headers: svc.auth() });
    expect(download.statusCode).toBe(200);
    expect(Number(download.headers['content-length'])).toBe(bytes.length);
    const got = Buffer.from(await download.body.arrayBuffer());
    expect(got.equals(bytes)).toBe(true);
    expect(readdirSync(otherDir)).toEqual([]);
    // Another account sees nothing of it.
    const foreign = await request(`${address}${path}`, { headers: svc.auth('B') });
    expect(foreign.statusCode).toBe(404);
    await foreign.body.dump();
  });

  it('streams a 150 MB upload over a real connection into the store and back out, byte for byte', async () => {
    const address = await svc.app.listen({ port: 0, host: '127.0.0.1' });
    // Blocks not a multiple of the chunk size.
    const total = MAX_ARTIFACT_SIZE_BYTES;
    const { body, sha256: sent } = repeatedBody(randomBytes(ARTIFACT_CHUNK_BYTES + 4096), total);
    const put = await request(`${address}/v1/agent/jobs/${job.jobId}/artifacts/video.webm`, {
      method: 'PUT',
      headers: { ...svc.auth(), 'x-agent-id': agent, ...octets, 'content-length': String(total) },
      body,
    });
    const digest = sent();
    expect(put.statusCode).toBe(201);
    expect(await put.body.json()).toEqual({ name: 'video.webm', sizeBytes: total, sha256: digest });
    expect(await rows()).toEqual({ artifacts: 1, chunks: Math.ceil(total / ARTIFACT_CHUNK_BYTES) });
    const opened = await svc.context.artifacts.open(svc.accountA.id, job.jobId, 'video.webm');
    const back = createHash('sha256');
    let size = 0;
    for await (const chunk of opened!.stream) {
      back.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    expect(size).toBe(total);
    expect(back.digest('hex')).toBe(digest);
  });

  it('replaces an artifact whole on a second upload of its name, leaving no chunk of the first', async () => {
    expect((await upload('log.txt', randomBytes(2 * ARTIFACT_CHUNK_BYTES + 1))).statusCode).toBe(201);
    expect(await rows()).toEqual({ artifacts: 1, chunks: 3 });
    const second = randomBytes(1000);
    expect((await upload('log.txt', second)).statusCode).toBe(201);
    expect(await rows()).toEqual({ artifacts: 1, chunks: 1 });
    const opened = await svc.context.artifacts.open(svc.accountA.id, job.jobId, 'log.txt');
    const chunks: Buffer[] = [];
    for await (const chunk of opened!.stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(second)).toBe(true);
    expect(opened!.sizeBytes).toBe(1000);
  });

  it('keeps nothing of a body longer or shorter than its content-length (413, 400)', async () => {
    const long = await upload('long.bin', Readable.from([randomBytes(600), randomBytes(600)]), {
      'content-length': '1000',
    });
    expect(long.statusCode).toBe(413);
    expect(long.json().attributes).toMatchObject({ code: 'OUTPOST_ERR_ARTIFACT_TOO_LARGE' });
    const short = await upload('short.bin', Readable.from([randomBytes(500)]), { 'content-length': '1000' });
    expect(short.statusCode).toBe(400);
    expect(short.json().attributes).toMatchObject({
      code: 'OUTPOST_ERR_ARTIFACT_INCOMPLETE',
      receivedBytes: 500,
    });
    // A broken upload's chunks may still be landing when the answer leaves: they go within moments.
    await expect.poll(rows, { timeout: 5000 }).toEqual({ artifacts: 0, chunks: 0 });
  });

  it('retention removes a job’s artifacts with its files’ age, and chunks an unfinished upload left after an hour', async () => {
    expect((await upload('a.bin', randomBytes(10))).statusCode).toBe(201);
    expect((await upload('b.bin', randomBytes(ARTIFACT_CHUNK_BYTES + 1))).statusCode).toBe(201);
    await svc.context.artifacts.removeJob(svc.accountA.id, job.jobId);
    expect(await rows()).toEqual({ artifacts: 0, chunks: 0 });
    expect(await svc.context.artifacts.open(svc.accountA.id, job.jobId, 'a.bin')).toBeNull();

    // A replica that stopped mid-upload leaves chunks that no artifact names.
    const nowMs = Date.now();
    await svc.context.db
      .insertInto('artifact_chunks')
      .values([
        { upload_id: 'crashed', seq: 0, data: randomBytes(100), created_at: nowMs - ORPHAN_CHUNK_AGE_MS - 1 },
        { upload_id: 'in-flight', seq: 0, data: randomBytes(100), created_at: nowMs - 1000 },
      ])
      .execute();
    const worker = new RetentionWorker(svc.context.db, retentionTasks({ artifacts: svc.context.artifacts }), {
      resultDays: 90,
      artifactDays: 30,
      agentDays: 30,
      log: pino({ level: 'silent' }),
    });
    await worker.runOnce(nowMs);
    const left = await svc.context.db.selectFrom('artifact_chunks').select('upload_id').execute();
    expect(left).toEqual([{ upload_id: 'in-flight' }]);
    expect(
      await new DatabaseArtifactStore(svc.context.db).pruneOrphans(nowMs + ORPHAN_CHUNK_AGE_MS, 10),
    ).toBe(1);
  });
});
