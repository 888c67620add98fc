import { randomBytes } from 'node:crypto';
import {
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { type PlannedArtifact, planArtifactUpload, uploadOrder } from '../../src/browser/artifact-budget.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import type * as PlaywrightCore from '../../runtimes/2026.04/node_modules/playwright-core/index.js';
import {
  CHROMIUM_PATH,
  chromiumRequirement,
  missingRequirement,
  runtimeRequirement,
} from '../helpers/requirements.js';
import { unzip } from './formats.js';

/**
 * Fitting a run's artifacts into the upload budget, over a real trace (recorded with the
 * runtime's Playwright against Chromium) grown with many screencast frames and large DOM
 * snapshots: frames go first, snapshots next, then lower-priority files; the trace keeps every
 * action and network entry and still unzips and parses; the upload is never refused whole.
 */
const RUNTIME_ID = '2026.04';
const RUNTIME_DIR = join(PACKAGE_ROOT, 'runtimes', RUNTIME_ID);
const skip = missingRequirement([chromiumRequirement(), runtimeRequirement(RUNTIME_ID)]);
const LAUNCH_ARGS = process.getuid?.() === 0 ? ['--no-sandbox'] : [];

/** Frames and snapshots added to the recorded trace, and their sizes, bytes. */
const FRAMES = 120;
const FRAME_BYTES = 40_000;
const SNAPSHOTS = 30;
const SNAPSHOT_TEXT_BYTES = 100_000;
/** The failing test's screenshot, bytes: smaller than the trace even once trimmed. */
const SHOT_BYTES = 2_000;

/** Process ids of the Chromium processes descending from this process. */
function chromiumDescendants(): number[] {
  const parents = new Map<number, number>();
  const names = new Map<number, string>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const fields = /^(\d+) \((.*)\) \S (\d+)/.exec(readFileSync(`/proc/${pid}/stat`, 'latin1'));
      if (fields) {
        parents.set(Number(fields[1]), Number(fields[3]));
        names.set(Number(fields[1]), fields[2] as string);
      }
    } catch {
      // exited while listing
    }
  }
  const ours = (pid: number): boolean => {
    for (let at = parents.get(pid), hops = 0; at !== undefined && hops < 64; at = parents.get(at), hops++) {
      if (at === process.pid) return true;
    }
    return false;
  };
  return [...names].filter(([pid, name]) => name.startsWith('chrom') && ours(pid)).map(([pid]) => pid);
}

/** True while `pid` runs (a zombie left to another reaper has ended). */
function alive(pid: number): boolean {
  try {
    const fields = /^\d+ \(.*\) (\S) (\d+)/.exec(readFileSync(`/proc/${pid}/stat`, 'latin1'));
    return fields !== null && (fields[1] !== 'Z' || Number(fields[2]) === process.pid);
  } catch {
    return false;
  }
}

/** Writes `files` as a ZIP archive: deflated, images stored as Playwright's frames would barely shrink. */
async function writeTestZip(files: Map<string, Buffer>, path: string): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const [name, data] of files) zip.addBuffer(data, name, { compress: !name.endsWith('.jpeg') });
  zip.end();
  await new Promise<void>((resolve, reject) => {
    const out = createWriteStream(path);
    out.on('close', resolve);
    out.on('error', reject);
    zip.outputStream.pipe(out);
  });
}

type TraceEvent = { type: string; sha1?: string; callId?: string };

/** The events of each event log of a trace archive, and its entry names. */
function readTrace(path: string): { events: TraceEvent[]; network: number; names: string[] } {
  const files = unzip(readFileSync(path));
  const lines = (name: string) =>
    (files.get(name)?.toString('utf8') ?? '').split('\n').filter((line) => line.trim() !== '');
  return {
    events: lines('trace.trace').map((line) => JSON.parse(line) as TraceEvent),
    network: lines('trace.network').map((line) => JSON.parse(line)).length,
    names: [...files.keys()],
  };
}

describe('upload order', () => {
  const file = (name: string, kind: PlannedArtifact['kind'], failing?: boolean): PlannedArtifact => ({
    name,
    kind,
    path: `/run/${name}`,
    sizeBytes: 1,
    ...(failing === undefined ? {} : { failing }),
  });

  it('puts the failing test’s trace and one screenshot first, then screenshots, videos, other traces and reports', () => {
    const files = [
      file('report.html', 'REPORT'),
      file('other-trace.zip', 'TRACE'),
      file('video.webm', 'VIDEO'),
      file('step-1.png', 'SCREENSHOT'),
      file('failed.png', 'SCREENSHOT', true),
      file('failing-trace.zip', 'TRACE', true),
      file('step-2.png', 'SCREENSHOT'),
    ];
    expect(uploadOrder(files).map((f) => f.name)).toEqual([
      'failing-trace.zip',
      'failed.png',
      'step-1.png',
      'step-2.png',
      'video.webm',
      'report.html',
      'other-trace.zip',
    ]);
  });

  it('without a failing mark takes the first trace and the last screenshot', () => {
    const files = [
      file('a.png', 'SCREENSHOT'),
      file('t1.zip', 'TRACE'),
      file('b.png', 'SCREENSHOT'),
      file('t2.zip', 'TRACE'),
    ];
    expect(uploadOrder(files).map((f) => f.name)).toEqual(['t1.zip', 'b.png', 'a.png', 't2.zip']);
  });
});

describe.skipIf(skip)('trimming a real trace to the upload budget', () => {
  const runtimeRequire = createRequire(join(RUNTIME_DIR, 'package.json'));
  let dir: string;
  let server: Server;
  /** The grown trace's entries, to write a fresh copy for each case. */
  let grown: Map<string, Buffer>;
  let recorded: { events: TraceEvent[]; network: number };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-artifact-budget-'));
    server = createServer((req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        req.url === '/next'
          ? '<!doctype html><title>Next</title><h1>Next</h1>'
          : '<!doctype html><title>Start</title><input id="q"><a id="go" href="/next">go</a>',
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { chromium } = runtimeRequire('playwright-core') as typeof PlaywrightCore;
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: LAUNCH_ARGS });
    const started = chromiumDescendants();
    try {
      const context = await browser.newContext();
      await context.tracing.start({ screenshots: true, snapshots: true });
      const page = await context.newPage();
      await page.goto(`${origin}/`);
      await page.fill('#q', 'hello');
      await Promise.all([page.waitForURL(`${origin}/next`), page.click('#go')]);
      await context.tracing.stop({ path: join(dir, 'recorded.zip') });
      await context.close();
    } finally {
      await browser.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(started.length).toBeGreaterThan(0);
    const deadline = Date.now() + 5_000;
    while (started.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(started.filter(alive), 'Chromium processes left behind').toEqual([]);

    // Grown: many frames (a real frame's header, then noise that does not compress) and large
    // snapshots, as the events Playwright writes for them.
    const files = unzip(readFileSync(join(dir, 'recorded.zip')));
    const trace = readTrace(join(dir, 'recorded.zip'));
    recorded = trace;
    const frame = trace.events.find((e) => e.type === 'screencast-frame');
    const snapshot = trace.events.find((e) => e.type === 'frame-snapshot') as
      | (TraceEvent & { snapshot: Record<string, unknown> })
      | undefined;
    expect(frame?.sha1).toBeDefined();
    expect(snapshot).toBeDefined();
    const jpeg = files.get(`resources/${frame?.sha1}`) as Buffer;
    const added: string[] = [];
    for (let i = 0; i < FRAMES; i++) {
      const sha1 = `page@grown-${i}.jpeg`;
      files.set(`resources/${sha1}`, Buffer.concat([jpeg.subarray(0, 20), randomBytes(FRAME_BYTES)]));
      added.push(JSON.stringify({ ...frame, sha1, timestamp: 10_000 + i }));
    }
    for (let i = 0; i < SNAPSHOTS; i++) {
      const text = randomBytes(SNAPSHOT_TEXT_BYTES / 2).toString('hex');
      const sha1 = `grown-${i}.css`;
      files.set(`resources/${sha1}`, Buffer.from(`body{--x:"${randomBytes(20_000).toString('base64')}"}`));
      added.push(
        JSON.stringify({
          type: 'frame-snapshot',
          snapshot: {
            ...snapshot?.snapshot,
            snapshotName: `grown@${i}`,
            html: ['HTML', {}, ['BODY', {}, ['P', {}, text]]],
            resourceOverrides: [{ url: `http://127.0.0.1/grown-${i}.css`, sha1 }],
          },
        }),
      );
    }
    const log = files.get('trace.trace')?.toString('utf8') ?? '';
    files.set('trace.trace', Buffer.from(`${log.trimEnd()}\n${added.join('\n')}\n`));
    grown = files;
  }, 60_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh copy of the grown trace plus a screenshot, a second screenshot and a video, in `sub`. */
  async function runFiles(sub: string): Promise<PlannedArtifact[]> {
    const at = join(dir, sub);
    rmSync(at, { recursive: true, force: true });
    mkdirSync(at, { recursive: true });
    await writeTestZip(grown, join(at, 'trace.zip'));
    const write = (name: string, bytes: number) => {
      writeFileSync(join(at, name), randomBytes(bytes));
      return join(at, name);
    };
    const files: PlannedArtifact[] = [
      { name: 'video.webm', kind: 'VIDEO', path: write('video.webm', 600_000), sizeBytes: 600_000 },
      { name: 'step.png', kind: 'SCREENSHOT', path: write('step.png', 200_000), sizeBytes: 200_000 },
      {
        name: 'failed.png',
        kind: 'SCREENSHOT',
        path: write('failed.png', SHOT_BYTES),
        sizeBytes: SHOT_BYTES,
        failing: true,
      },
      {
        name: 'trace.zip',
        kind: 'TRACE',
        path: join(at, 'trace.zip'),
        sizeBytes: statSync(join(at, 'trace.zip')).size,
        failing: true,
      },
    ];
    return files;
  }

  /** Asserts the trimmed trace at `path` unzips and parses and kept every action and network entry. */
  function expectIntactActions(path: string): { events: TraceEvent[]; names: string[] } {
    const trace = readTrace(path);
    const actions = (events: TraceEvent[]) => events.filter((e) => e.type === 'before' || e.type === 'after');
    expect(actions(trace.events)).toEqual(actions(recorded.events));
    expect(trace.events.filter((e) => e.type === 'log').length).toBe(
      recorded.events.filter((e) => e.type === 'log').length,
    );
    expect(trace.network).toBe(recorded.network);
    return trace;
  }

  it('fits by dropping screencast frames only when that is enough', async () => {
    const files = await runFiles('frames');
    const total = files.reduce((sum, f) => sum + f.sizeBytes, 0);
    const plan = await planArtifactUpload({ files, budgetBytes: total - (FRAMES * FRAME_BYTES) / 2 });
    expect(plan.dropped).toEqual([]);
    expect(plan.files.map((f) => f.name)).toEqual(['trace.zip', 'failed.png', 'step.png', 'video.webm']);
    expect(plan.trimmed).toHaveLength(1);
    const [trimmed] = plan.trimmed;
    expect(trimmed?.screencastFrames).toBeGreaterThanOrEqual(FRAMES);
    expect(trimmed?.snapshots).toBe(0);
    expect(trimmed?.resources).toBeGreaterThanOrEqual(FRAMES);
    expect(plan.totalBytes).toBeLessThanOrEqual(total - (FRAMES * FRAME_BYTES) / 2);
    const trace = expectIntactActions(files.find((f) => f.name === 'trace.zip')?.path as string);
    expect(trace.events.filter((e) => e.type === 'screencast-frame')).toEqual([]);
    expect(trace.events.filter((e) => e.type === 'frame-snapshot').length).toBeGreaterThanOrEqual(SNAPSHOTS);
    expect(trace.names.filter((n) => n.endsWith('.jpeg'))).toEqual([]);
    expect(trace.names.filter((n) => n.endsWith('.css'))).toHaveLength(SNAPSHOTS);
  });

  it('drops DOM snapshots next, keeping actions, logs and network entries', async () => {
    const files = await runFiles('snapshots');
    const total = files.reduce((sum, f) => sum + f.sizeBytes, 0);
    const budget = total - FRAMES * FRAME_BYTES - (SNAPSHOTS * SNAPSHOT_TEXT_BYTES) / 4;
    const plan = await planArtifactUpload({ files, budgetBytes: budget });
    expect(plan.dropped).toEqual([]);
    expect(plan.files).toHaveLength(4);
    const [trimmed] = plan.trimmed;
    expect(trimmed?.screencastFrames).toBeGreaterThanOrEqual(FRAMES);
    expect(trimmed?.snapshots).toBeGreaterThanOrEqual(SNAPSHOTS);
    expect(plan.totalBytes).toBeLessThanOrEqual(budget);
    const trace = expectIntactActions(files.find((f) => f.name === 'trace.zip')?.path as string);
    expect(trace.events.filter((e) => e.type === 'frame-snapshot')).toEqual([]);
    expect(trace.names.filter((n) => n.endsWith('.css'))).toEqual([]);
  });

  it('then leaves out lower-priority files, and never refuses the whole upload', async () => {
    const files = await runFiles('drop');
    // Room for the trimmed trace and the failing screenshot only.
    const trimmed = await trimmedSize(files);
    expect(trimmed).toBeGreaterThan(SHOT_BYTES);
    const plan = await planArtifactUpload({ files, budgetBytes: trimmed + SHOT_BYTES + 1_000 });
    expect(plan.files.map((f) => f.name)).toEqual(['trace.zip', 'failed.png']);
    expect(plan.dropped.map((f) => f.name).sort()).toEqual(['step.png', 'video.webm']);
    for (const dropped of plan.dropped) expect(dropped.reason).toContain('budget');
    expectIntactActions(files.find((f) => f.name === 'trace.zip')?.path as string);

    // A budget smaller than every file but the screenshot: the screenshot still goes.
    const tiny = await planArtifactUpload({ files: await runFiles('tiny'), budgetBytes: SHOT_BYTES });
    expect(tiny.files.map((f) => f.name)).toEqual(['failed.png']);
    expect(tiny.dropped.map((f) => f.name).sort()).toEqual(['step.png', 'trace.zip', 'video.webm']);
  });

  /** Size of the trace of `files` once frames and snapshots are dropped, bytes (on a copy). */
  async function trimmedSize(files: PlannedArtifact[]): Promise<number> {
    const copy = await runFiles('measure');
    const plan = await planArtifactUpload({ files: copy.filter((f) => f.kind === 'TRACE'), budgetBytes: 1 });
    expect(plan.trimmed[0]?.snapshots).toBeGreaterThan(0);
    expect(files).toHaveLength(4);
    console.info(`trimmed trace: ${plan.trimmed[0]?.bytesBefore} → ${plan.trimmed[0]?.bytesAfter} bytes`);
    return plan.trimmed[0]?.bytesAfter ?? Number.NaN;
  }
});
