import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { compiledChildPath } from '../../common/compiled-child.js';
import type { SuiteReportRequest, SuiteReportResult } from './suite-report-worker.cjs';

export type { SuiteReportRequest, SuiteReportResult };

/** The report-parsing worker's heap, MiB, and how long it may take. */
const REPORT_WORKER_HEAP_MB = 256;
const REPORT_WORKER_TIMEOUT_MS = 30_000;

/**
 * Reads a suite's JSON report (Playwright's `json` reporter, untrusted) in a worker thread
 * (suite-report-worker.cts) with a heap limit of 256 MiB and a time limit of 30 s, and maps it onto
 * steps and errors. Never throws: a missing, oversized or malformed report is `{ ok: false }`.
 *
 * @param request the report's path, its size cap (bytes), the project's root, and the most steps and errors kept.
 * @returns the mapped report, or why there is none.
 */
export async function parseSuiteReport(request: SuiteReportRequest): Promise<SuiteReportResult> {
  const file = await compiledChildPath(import.meta.url, 'suite-report-worker');
  return new Promise<SuiteReportResult>((resolve) => {
    const worker = new Worker(file, {
      workerData: request,
      resourceLimits: { maxOldGenerationSizeMb: REPORT_WORKER_HEAP_MB },
    });
    let settled = false;
    const settle = (result: SuiteReportResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(result);
    };
    const timer = setTimeout(
      () => settle({ ok: false, message: 'reading the JSON report took too long' }),
      REPORT_WORKER_TIMEOUT_MS,
    );
    worker.once('message', (result: SuiteReportResult) => settle(result));
    worker.once('error', (error) =>
      settle({ ok: false, message: `the JSON report could not be read: ${error.message}` }),
    );
    worker.once('exit', () => settle({ ok: false, message: 'the JSON report could not be read' }));
  });
}

/** Up to `maxBytes` of a regular file (never through a link), or null when there is none. */
export async function readSmall(path: string, maxBytes: number): Promise<string | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!(await handle.stat()).isFile()) return null;
    const buffer = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}
