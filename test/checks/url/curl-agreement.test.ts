import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUrlExecutor, type UrlExecutor } from '../../../src/checks/url/index.js';
import type { HttpTimings } from '../../../src/protocol/http-result.js';
import { type ChildHttpServer, spawnHttpServer } from '../../helpers/http-servers.js';
import { commandWorks, missingRequirement } from '../../helpers/requirements.js';
import { createTestCa, type TestCa } from '../../helpers/test-ca.js';
import { contextOf, jobOf } from '../../helpers/jobs.js';

// Our timings must agree with curl -w on the same request (reference/check-types.md, "HTTP
// timing"). The server, in its own process, waits a known delay before its first byte; each
// side runs several times, interleaved (see expectAgreement for how they are compared).

const run = promisify(execFile);
const missing = missingRequirement([
  { ok: commandWorks('curl', ['--version']), what: 'curl', install: 'apt-get install curl' },
  { ok: commandWorks('openssl', ['version']), what: 'the openssl CLI', install: 'apt-get install openssl' },
]);
const ROUNDS = 11;
const DELAY_MS = 80;

type Sample = { connect: number; appconnect: number; starttransfer: number; total: number };

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function curlOnce(url: string, caFile: string): Promise<Sample> {
  const format = '%{time_connect} %{time_appconnect} %{time_starttransfer} %{time_total}';
  const { stdout } = await run('curl', ['-s', '-o', '/dev/null', '--cacert', caFile, '-w', format, url]);
  const [connect = 0, appconnect = 0, starttransfer = 0, total = 0] = stdout
    .trim()
    .split(' ')
    .map((s) => Number(s) * 1000);
  return { connect, appconnect, starttransfer, total };
}

async function oursOnce(executor: UrlExecutor, url: string): Promise<HttpTimings> {
  const job = jobOf('URL', { url, followRedirects: false, skipSSL: false, ipFamily: 'IPv4', assertions: [] });
  const outcome = await executor.run(job, contextOf());
  expect(outcome.status).toBe('PASSED');
  return outcome.httpCheckResult!.timings;
}

/**
 * Compares the fastest of ours with the fastest of curl's, within max(2 ms, 5 %). A loaded
 * machine only ever adds delay, so the minimum over several rounds is the estimate least
 * touched by other processes; medians moved by ±5 ms on this shared 2-core machine while other
 * test suites ran, though they agreed within 2.5 ms on a quiet one (print them with
 * OUTPOST_PRINT_TIMINGS=1).
 */
function expectAgreement(ours: number[], theirs: number[], what: string): void {
  const report = summarize(ours, theirs, what);
  const fastest = (values: number[]) => Math.min(...values);
  const tolerance = Math.max(2, fastest(theirs) * 0.05);
  expect(Math.abs(fastest(ours) - fastest(theirs)), report).toBeLessThanOrEqual(tolerance);
}

/** Minimum, median and median paired difference, printed with OUTPOST_PRINT_TIMINGS=1. */
function summarize(ours: number[], theirs: number[], what: string): string {
  const difference = median(ours.map((value, i) => value - (theirs[i] ?? Number.NaN)));
  const ms = (value: number) => `${value.toFixed(3)} ms`;
  const report =
    `${what}: fastest ours ${ms(Math.min(...ours))}, curl ${ms(Math.min(...theirs))}; ` +
    `median ours ${ms(median(ours))}, curl ${ms(median(theirs))}; median difference ${ms(difference)}`;
  if (process.env.OUTPOST_PRINT_TIMINGS) console.info(report);
  return report;
}

describe.skipIf(missing !== null)('URL timings agree with curl -w', () => {
  let ca: TestCa;
  let caFile: string;
  let http: ChildHttpServer;
  let https: ChildHttpServer;
  let executor: UrlExecutor;

  beforeAll(async () => {
    ca = createTestCa();
    caFile = join(ca.dir, 'trusted-ca.crt');
    writeFileSync(caFile, ca.caCert);
    http = await spawnHttpServer();
    https = await spawnHttpServer({ tls: ca.issue({ commonName: 'localhost' }) });
    executor = createUrlExecutor({ ca: ca.caCert });
  });
  afterAll(async () => {
    await Promise.all([http?.close(), https?.close()]);
    ca?.destroy();
  });

  it.each([
    ['http', () => http],
    ['https', () => https],
  ] as const)('over %s: first byte and total within max(2 ms, 5 percent) of curl', async (scheme, server) => {
    const url = `${server().origin}/delay/${DELAY_MS}`;
    await oursOnce(executor, url); // warm-up: JIT and first-use costs are not what we measure
    await curlOnce(url, caFile);
    const ours: HttpTimings[] = [];
    const curls: Sample[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate who goes first so neither always meets a warmer server.
      if (round % 2 === 0) {
        ours.push(await oursOnce(executor, url));
        curls.push(await curlOnce(url, caFile));
      } else {
        curls.push(await curlOnce(url, caFile));
        ours.push(await oursOnce(executor, url));
      }
    }

    expect(median(ours.map((t) => t.response!))).toBeGreaterThanOrEqual(DELAY_MS);
    const theirs = (key: keyof Sample) => curls.map((c) => c[key]);
    expectAgreement(
      ours.map((t) => t.response!),
      theirs('starttransfer'),
      'first byte (time_starttransfer)',
    );
    expectAgreement(
      ours.map((t) => t.end!),
      theirs('total'),
      'total (time_total)',
    );
    // Connect and TLS are printed, not asserted: Node emits 'connect' ~0.5–1 ms after the kernel
    // completes a loopback handshake (an event-loop turn), and curl's appconnect includes loading
    // its CA file. Both are platform constants well below the 5 % a first byte is held to.
    summarize(
      ours.map((t) => t.connect!),
      theirs('connect'),
      'connect (time_connect)',
    );
    if (scheme === 'https') {
      summarize(
        ours.map((t) => t.secureConnect!),
        theirs('appconnect'),
        'TLS done (time_appconnect)',
      );
    }
  });
});
