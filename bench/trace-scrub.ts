/**
 * Trace scrubbing throughput: a large trace shaped like Playwright's (context options, actions
 * with their logs, DOM snapshots with input values, screencast frames, network entries with
 * credential headers and cookies, text resources) scrubbed of three secrets through the agent's
 * path (the artifact worker, final scan included). Prints MiB/s of trace content (the entries,
 * decompressed) and of the archive. Goal: at least 50 MiB/s of content.
 * Run: `npm run build && node dist/bench/trace-scrub.js` (or `npm run bench -- trace-scrub`).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { scrubArtifacts } from '../src/browser/trace-scrub.js';
import { writeZip, type ZipEntry } from '../src/browser/trace-scrub/zip.js';

/** What benchTraceScrub measured; rates in MiB/s, times in ms. */
export type TraceScrubBenchReport = {
  contentMiB: number;
  archiveMiB: number;
  medianMs: number;
  /** CPU time of the whole process (the worker's threads included), median, ms. */
  medianCpuMs: number;
  contentMiBPerSecond: number;
  /** Content over CPU time: the rate on a core of its own, whatever else the machine runs. */
  contentMiBPerCpuSecond: number;
  archiveMiBPerSecond: number;
  goalMiBPerSecond: number;
};

const GOAL_MIB_PER_SECOND = 50;
const SECRETS = ['bench-Secret-value~1', 'hunter2-but-longer', 'sk_live_0123456789abcdef'];
const PAGE = 'page@0123456789abcdef0123456789abcdef';

/** A DOM snapshot of a form page: nested elements, input values (one a secret), text. */
function snapshotHtml(action: number): unknown {
  const rows = Array.from({ length: 120 }, (_, i) => [
    'DIV',
    { class: `row row-${i}`, 'data-index': String(i) },
    ['SPAN', { class: 'label' }, `Item ${i} of action ${action}: lorem ipsum dolor sit amet, consectetur`],
    [
      'INPUT',
      {
        __playwright_value_: i === 7 ? SECRETS[0] : `value ${i}`,
        name: `field${i}`,
        type: i === 7 ? 'password' : 'text',
      },
    ],
  ]);
  return ['HTML', {}, ['HEAD', {}, ['TITLE', {}, 'Bench']], ['BODY', {}, ['MAIN', {}, ...rows]]];
}

/** The entries of a trace of `actions` actions, `framesPerAction` screencast frames each. */
export function buildBenchTrace(actions: number, framesPerAction: number): ZipEntry[] {
  const mtime = new Date();
  const entries: ZipEntry[] = [];
  const events: string[] = [
    JSON.stringify({
      version: 8,
      type: 'context-options',
      origin: 'library',
      browserName: 'chromium',
      options: {
        extraHTTPHeaders: [{ name: 'Authorization', value: `Bearer ${SECRETS[2]}` }],
        httpCredentials: { username: 'monitor', password: SECRETS[1] },
        viewport: { width: 1280, height: 720 },
      },
    }),
  ];
  const network: string[] = [];
  const jpegHeader = Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex');
  let time = 100;
  for (let a = 0; a < actions; a++) {
    const callId = `call@${a}`;
    events.push(
      JSON.stringify({
        type: 'before',
        callId,
        startTime: time,
        class: 'Frame',
        method: 'fill',
        params: {
          selector: `#field${a % 120}`,
          value: a % 10 === 0 ? SECRETS[0] : `text ${a}`,
          timeout: 30000,
        },
        pageId: PAGE,
        beforeSnapshot: `before@${callId}`,
      }),
    );
    events.push(
      JSON.stringify({
        type: 'frame-snapshot',
        snapshot: {
          callId,
          snapshotName: `before@${callId}`,
          pageId: PAGE,
          frameId: 'frame@1',
          frameUrl: `http://127.0.0.1:8080/form?token=${encodeURIComponent(SECRETS[1] as string)}`,
          html: snapshotHtml(a),
          viewport: { width: 1280, height: 720 },
          timestamp: time,
          resourceOverrides: [{ url: 'http://127.0.0.1:8080/app.css', sha1: `css-${a % 20}.css` }],
          isMainFrame: true,
        },
      }),
    );
    for (const message of [
      `waiting for locator('#field${a % 120}')`,
      `  fill("${a % 10 === 0 ? SECRETS[0] : 'x'}")`,
    ]) {
      events.push(JSON.stringify({ type: 'log', callId, time: time++, message }));
    }
    for (let f = 0; f < framesPerAction; f++) {
      const sha1 = `${PAGE}-${a}-${f}.jpeg`;
      // Frames of a busy page: real frames deflate by a half; noise is the worst case.
      const body = Buffer.concat([randomBytes(20_000), Buffer.alloc(20_000, a & 0xff)]);
      entries.push({
        name: `resources/${sha1}`,
        data: Buffer.concat([jpegHeader, body]),
        mtime,
        compressed: true,
      });
      events.push(
        JSON.stringify({
          type: 'screencast-frame',
          pageId: PAGE,
          sha1,
          width: 1280,
          height: 720,
          timestamp: time++,
        }),
      );
    }
    events.push(JSON.stringify({ type: 'after', callId, endTime: time++, afterSnapshot: `after@${callId}` }));
    const bodySha1 = `body-${a}.json`;
    entries.push({
      name: `resources/${bodySha1}`,
      data: Buffer.from(
        JSON.stringify({
          items: Array.from({ length: 200 }, (_, i) => ({
            id: i,
            name: `item ${i}`,
            token: i === 3 ? SECRETS[2] : null,
          })),
        }),
      ),
      mtime,
      compressed: true,
    });
    network.push(
      JSON.stringify({
        type: 'resource-snapshot',
        snapshot: {
          pageref: PAGE,
          request: {
            method: 'GET',
            url: `http://127.0.0.1:8080/api/items?page=${a}`,
            cookies: [{ name: 'session', value: `sess-${a % 5}-0123456789abcdef` }],
            headers: [
              { name: 'Accept', value: 'application/json' },
              { name: 'Authorization', value: `Bearer ${SECRETS[2]}` },
              { name: 'Cookie', value: `session=sess-${a % 5}-0123456789abcdef` },
            ],
          },
          response: {
            status: 200,
            headers: [{ name: 'Set-Cookie', value: `session=sess-${a % 5}-0123456789abcdef; Path=/` }],
            content: { mimeType: 'application/json', _sha1: bodySha1 },
          },
        },
      }),
    );
  }
  for (let c = 0; c < 20; c++) {
    entries.push({
      name: `resources/css-${c}.css`,
      data: Buffer.from(`.row-${c} { color: #${c}${c}${c}; }\n`.repeat(2_000)),
      mtime,
      compressed: true,
    });
  }
  entries.unshift(
    { name: 'trace.trace', data: Buffer.from(`${events.join('\n')}\n`), mtime, compressed: true },
    { name: 'trace.network', data: Buffer.from(`${network.join('\n')}\n`), mtime, compressed: true },
    {
      name: 'trace.stacks',
      data: Buffer.from('{"files":["/check/test.spec.ts"],"stacks":[]}'),
      mtime,
      compressed: true,
    },
  );
  return entries;
}

/** Scrubs a ~100 MiB real-shaped trace three times and prints the median rate. */
export async function benchTraceScrub(actions = 400, framesPerAction = 5): Promise<TraceScrubBenchReport> {
  const dir = await mkdtemp(join(tmpdir(), 'outpost-bench-trace-'));
  try {
    const entries = buildBenchTrace(actions, framesPerAction);
    const contentBytes = entries.reduce((sum, e) => sum + e.data.length, 0);
    await writeZip(entries, join(dir, 'trace.zip'));
    const archiveBytes = (await stat(join(dir, 'trace.zip'))).size;
    const times: number[] = [];
    const cpuTimes: number[] = [];
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      const outcome = await scrubArtifacts({
        dir,
        files: [{ name: 'trace.zip', kind: 'TRACE' }],
        secrets: SECRETS,
        outDir: join(dir, 'out'),
      });
      times.push(performance.now() - started);
      const cpu = process.cpuUsage(cpuBefore);
      cpuTimes.push((cpu.user + cpu.system) / 1000);
      if (outcome.leaked) throw new Error(`the bench trace did not scrub: ${outcome.reason}`);
      if (run === 0) {
        console.log(
          `replaced ${outcome.counts.secretValues} secret values and ${outcome.counts.credentialHeaders} credential values`,
        );
      }
    }
    const medianMs = [...times].sort((a, b) => a - b)[1] as number;
    const medianCpuMs = [...cpuTimes].sort((a, b) => a - b)[1] as number;
    const mib = (bytes: number) => bytes / 1024 / 1024;
    const report: TraceScrubBenchReport = {
      contentMiB: Math.round(mib(contentBytes) * 10) / 10,
      archiveMiB: Math.round(mib(archiveBytes) * 10) / 10,
      medianMs: Math.round(medianMs),
      medianCpuMs: Math.round(medianCpuMs),
      contentMiBPerSecond: Math.round((mib(contentBytes) / (medianMs / 1000)) * 10) / 10,
      contentMiBPerCpuSecond: Math.round((mib(contentBytes) / (medianCpuMs / 1000)) * 10) / 10,
      archiveMiBPerSecond: Math.round((mib(archiveBytes) / (medianMs / 1000)) * 10) / 10,
      goalMiBPerSecond: GOAL_MIB_PER_SECOND,
    };
    console.log(
      `trace scrub: ${report.contentMiB} MiB of content (${report.archiveMiB} MiB archive) in ${report.medianMs} ms (median of 3): ` +
        `${report.contentMiBPerSecond} MiB/s of content, ${report.archiveMiBPerSecond} MiB/s of archive ` +
        `(${report.contentMiBPerCpuSecond} MiB per CPU second, ${report.medianCpuMs} ms of CPU); ` +
        `goal ${GOAL_MIB_PER_SECOND} MiB/s: ${report.contentMiBPerSecond >= GOAL_MIB_PER_SECOND ? 'met' : 'NOT met'}`,
    );
    return report;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchTraceScrub();
  process.exit(0);
}
