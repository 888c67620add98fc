/**
 * A passing run's bulky parts (logs, HTTP bodies, most headers) are kept OUTPOST_PASSING_DETAIL_HOURS (24 h by
 * default); failing and degraded runs keep everything for the full retention (docs/architecture.md, "Store
 * size"). Results go through the real ingest path into a SQLite file store; the retention pass is the
 * service's own (the runs module's tasks).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../../src/protocol/index.js';
import { readDoc } from '../../../src/service/platform/store/schema.js';
import { DETAILS_DROPPED_REASON } from '../../../src/service/runs/results/compaction.js';
import {
  type FileStoreService,
  fileStoreService,
  measureStoreSize,
  retentionPass,
  storeResult,
  typicalApiResult,
} from '../../helpers/store-size.js';

const HOUR = 3_600_000;
/** Planted in bodies, headers and logs: gone from a compacted result everywhere it is read. */
const PLANTED = 'planted-9f3c2e-secretish';

let svc: FileStoreService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

async function storedDoc(id: string): Promise<{ doc: CheckResult; text: string; settled: number }> {
  const row = await svc!.db
    .selectFrom('check_results')
    .select(['doc', 'details_settled'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return { doc: readDoc(row.doc), text: row.doc, settled: row.details_settled };
}

async function apiResult(id: string): Promise<Record<string, unknown>> {
  const res = await svc!.app.inject({
    method: 'GET',
    url: `/v1/check-results/${svc!.checkId}/${id}`,
    headers: svc!.headers,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('passing runs lose their details after OUTPOST_PASSING_DETAIL_HOURS', () => {
  it('drops logs, bodies and headers of a passing run past 24 h; keeps failing, degraded and younger runs whole', async () => {
    svc = await fileStoreService();
    const passing = await storeResult(svc, (job) => typicalApiResult(job, 'PASSED', PLANTED));
    const failing = await storeResult(svc, (job) => typicalApiResult(job, 'FAILED', PLANTED));
    const degraded = await storeResult(svc, (job) => typicalApiResult(job, 'DEGRADED', PLANTED));
    const before = await storedDoc(passing);
    expect(before.text).toContain(PLANTED);

    // 23 h on: every result is still whole.
    await retentionPass(svc, Date.now() + 23 * HOUR);
    for (const id of [passing, failing, degraded]) expect((await storedDoc(id)).settled).toBe(0);
    expect((await storedDoc(passing)).text).toBe(before.text);

    // 25 h on: the passing run is compacted, the others only marked as looked at.
    await retentionPass(svc, Date.now() + 25 * HOUR);
    const after = await storedDoc(passing);
    expect(after.settled).toBe(1);
    expect(after.text).not.toContain(PLANTED);
    expect(after.doc.logs).toEqual([]);
    const http = after.doc.httpCheckResult!;
    expect(http.response?.body).toBeUndefined();
    expect(http.request.body).toBeUndefined();
    expect(Object.keys(http.response!.headers).sort()).toEqual(['content-length', 'content-type', 'server']);
    expect(http.request.headers).toEqual({});
    // What a view needs beside the details stays: status, timings, size, certificate, assertions.
    expect(http.response).toMatchObject({ statusCode: 200, bodySizeBytes: 2048 });
    expect(http.timingPhases).toEqual(before.doc.httpCheckResult!.timingPhases);
    expect(http.certificate).toEqual(before.doc.httpCheckResult!.certificate);
    expect(after.doc.assertions).toEqual(before.doc.assertions);
    expect(after.doc.truncated).toEqual({
      reason: expect.stringContaining(DETAILS_DROPPED_REASON),
      originalSizeBytes: Buffer.byteLength(before.text),
      fields: [
        'logs',
        'httpCheckResult.request.headers',
        'httpCheckResult.response.body',
        'httpCheckResult.response.headers',
      ],
    });
    expect(Buffer.byteLength(after.text)).toBeLessThan(Buffer.byteLength(before.text) / 2);

    // The API answers the compacted result and says what was dropped; the planted text is nowhere.
    const answered = await apiResult(passing);
    expect(JSON.stringify(answered)).not.toContain(PLANTED);
    expect(answered).toMatchObject({
      status: 'PASSED',
      logs: [],
      truncated: { reason: expect.stringContaining('OUTPOST_PASSING_DETAIL_HOURS') },
    });

    // Failing and degraded runs keep everything, for the full retention.
    for (const id of [failing, degraded]) {
      const kept = await storedDoc(id);
      expect(kept.settled).toBe(1);
      expect(kept.text).toContain(PLANTED);
      expect(kept.doc.logs).toHaveLength(3);
      expect(kept.doc.httpCheckResult?.response?.body).toContain(PLANTED);
      expect(kept.doc.truncated).toBeUndefined();
    }
  });

  it('is idempotent and safe when passes run at once (replicas)', async () => {
    svc = await fileStoreService();
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await storeResult(svc, (job) => typicalApiResult(job)));
    const at = Date.now() + 25 * HOUR;
    // Two workers at once, in batches of 7 so they interleave.
    await Promise.all([retentionPass(svc, at, { batchSize: 7 }), retentionPass(svc, at, { batchSize: 7 })]);
    const once = await Promise.all(ids.map(storedDoc));
    for (const row of once) {
      expect(row.settled).toBe(1);
      expect(row.doc.logs).toEqual([]);
      expect(row.doc.truncated?.fields).toContain('httpCheckResult.response.body');
      // Not compacted twice: one set of fields, the size before the first compaction.
      expect(new Set(row.doc.truncated?.fields).size).toBe(row.doc.truncated?.fields.length);
    }
    // A result already settled is not read again, and compacting a compacted result changes nothing.
    await svc.db.updateTable('check_results').set({ details_settled: 0 }).execute();
    await retentionPass(svc, at);
    const twice = await Promise.all(ids.map(storedDoc));
    expect(twice.map((r) => r.text)).toEqual(once.map((r) => r.text));
  });

  it('OUTPOST_PASSING_DETAIL_HOURS sets the age', async () => {
    svc = await fileStoreService();
    const id = await storeResult(svc, (job) => typicalApiResult(job));
    await retentionPass(svc, Date.now() + 2 * HOUR, { passingDetailHours: 3 });
    expect((await storedDoc(id)).doc.logs).toHaveLength(3);
    await retentionPass(svc, Date.now() + 4 * HOUR, { passingDetailHours: 3 });
    expect((await storedDoc(id)).doc.logs).toEqual([]);
    expect((await storedDoc(id)).doc.truncated?.reason).toContain('(3 h)');
  });
});

describe('store size per result', () => {
  it('measures a typical API result on disk before and after its details are dropped', async () => {
    const figures = await measureStoreSize(Number(process.env.OUTPOST_STORE_SIZE_RESULTS ?? 300));
    console.log(`store size: ${JSON.stringify(figures)}`);
    // A typical result (2 KiB body) costs more than its document on disk.
    expect(figures.docBytes).toBeGreaterThan(2048);
    expect(figures.storedBytesPerResult).toBeGreaterThan(figures.docBytes);
    // Compacted: the document under half; on disk a result then fits one 4 KiB page instead of a page and an
    // overflow page, a quarter less or better (docs/architecture.md, "Store size", has the figures).
    expect(figures.compactedDocBytes).toBeLessThan(figures.docBytes / 2);
    expect(figures.compactedBytesPerResult).toBeLessThan(figures.storedBytesPerResult * 0.75);
    expect(figures.compactedPackedBytesPerResult).toBeLessThan(figures.storedPackedBytesPerResult * 0.75);
  }, 120_000);
});
