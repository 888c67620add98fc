import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import {
  awaitSession,
  CLI,
  type CliProcess,
  freePort,
  type ServiceProcess,
  spawnCollected,
  startServiceProcess,
  stopCli,
} from '../helpers/cli.js';
import { processes } from '../helpers/processes.js';
import { chromiumRequirement, missingRequirement, runtimeRequirement } from '../helpers/requirements.js';
import { expectNoSecret } from '../helpers/secrets.js';

// Acceptance test of "user code never runs under the agent's uid, in any supported deployment; the
// agent's API_KEY is not in any process environment a child could read". A real service and a real
// agent process (the built CLI) in three deployments:
//   1. the agent started as root;
//   2. the agent started as the image starts it: scripts/outpost-entrypoint.sh, a bare non-root uid
//      holding six capabilities, API_KEY moved from the environment into a pipe;
//   3. a non-root agent without capabilities: it must refuse user code, not run it as itself.
// In 1 and 2 a Playwright check suite written as an attacker walks /proc and the agent's folders and
// prints everything it read (gzip, base64, letter-spaced: no scrubber recognises it); the test decodes
// it and looks for the agent's key in every encoding. It also signals the agent, leaves processes and
// files behind, and an API setup script reports its uid.

const SETPRIV = '/usr/bin/setpriv';
const ENTRYPOINT = join(PACKAGE_ROOT, 'scripts', 'outpost-entrypoint.sh');
const RUNTIME = '2026.04';
/** The six capabilities a non-root agent needs (src/common/run-users.ts): CHOWN, DAC_OVERRIDE, FOWNER, KILL, SETGID, SETUID. */
const RUN_USER_CAPS = [0, 1, 3, 5, 6, 7];
/** Folders a run user can leave files in (src/common/run-users.ts SHARED_TEMP_DIRS). */
const SHARED_TEMP_DIRS = ['/tmp', '/var/tmp', '/dev/shm'];

const missing = missingRequirement([
  chromiumRequirement(),
  runtimeRequirement(RUNTIME),
  { ok: existsSync(SETPRIV), what: `util-linux setpriv (${SETPRIV})`, install: 'apt-get install util-linux' },
  {
    ok: process.getuid?.() === 0,
    what: 'root (the test starts agents as root and as other uids)',
    install: 'run the tests as root',
  },
]);

/** A fresh account key of the test service and the agent (random: it is what the suite hunts for). */
const newKey = () => `op_e2e_${randomBytes(20).toString('hex')}`;

// ---------------------------------------------------------------------------------------------
// Detecting the key

/** Every base64 run of at least 16 characters in `text`, decoded (latin1). */
function decodedBase64Runs(text: string): string {
  const runs = text.replace(/\s+/g, '').match(/[A-Za-z0-9+/_-]{16,}={0,2}/g) ?? [];
  return runs
    .map((run) => Buffer.from(run.replaceAll('-', '+').replaceAll('_', '/'), 'base64').toString('latin1'))
    .join('\n');
}

/**
 * Fails when `text` holds `key` in any form: as written, case-folded, URL-encoded, JSON-escaped,
 * base64 at any alignment (expectNoSecret), hex, letter-spaced (whitespace removed), or inside a
 * base64 run of the text once decoded.
 */
function expectNoKey(text: string, key: string, where: string): void {
  const hex = Buffer.from(key).toString('hex');
  const squeezed = text.replace(/[\s\0]+/g, '');
  for (const [form, haystack] of [
    ['as printed', text],
    ['letter-spacing removed', squeezed],
    ['base64 runs decoded', decodedBase64Runs(text)],
  ] as const) {
    try {
      expectNoSecret(haystack, key);
      expect(haystack.toLowerCase().includes(hex), 'hex form found').toBe(false);
    } catch (err) {
      throw new Error(`the agent's API key is in ${where} (${form}): ${(err as Error).message}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The attacker's check suite

/** One thing the suite tried to read: its bytes (base64) or the error code. */
type ProbeItem = { what: string; target: string; data?: string; error?: string };
/** What the suite printed, decoded. */
type ProbeSummary = {
  uid: number;
  gid: number;
  pid: number;
  ppid: number;
  killAgent: string;
  sleeperPid: number;
  sleeperAlive: boolean;
  loopStarted: boolean;
  leftFiles: string[];
  items: ProbeItem[];
};

/**
 * The spec an attacker would write: reads the environment and command line of every process, the
 * agent's descriptors, environment and working directory, every file under the agent's folders
 * (PROBE_AGENT_DIRS), signals the agent, leaves a detached `sleep` and a setsid'd shell loop and a
 * file in each shared temp folder behind, and prints it all gzipped, base64-encoded and
 * letter-spaced (chunks of 1500 characters, then `PROBE-END <count>`).
 */
const ATTACKER_SPEC = `
import { test, expect } from '@playwright/test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { spawn } from 'node:child_process';

const MAX_ITEM = 16384;
const MAX_TOTAL = 1500000;
const MAX_FILES = 300;

test('probe', async () => {
  test.setTimeout(60000);
  const agentPid = Number(process.env.PROBE_AGENT_PID);
  const dirs = JSON.parse(process.env.PROBE_AGENT_DIRS || '[]');
  const items = [];
  let total = 0;
  const record = (what, target, read) => {
    try {
      let data = read();
      if (data.length > MAX_ITEM) data = data.subarray(0, MAX_ITEM);
      if (total + data.length > MAX_TOTAL) {
        items.push({ what, target: String(target), error: 'BUDGET' });
        return;
      }
      total += data.length;
      items.push({ what, target: String(target), data: data.toString('base64') });
    } catch (err) {
      items.push({ what, target: String(target), error: (err && err.code) || String(err) });
    }
  };
  // Never blocks: a pipe or FIFO with nothing in it reads as empty.
  const readFile = (file, follow) => {
    const flags = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | (follow ? 0 : fs.constants.O_NOFOLLOW);
    const fd = fs.openSync(file, flags);
    try {
      const buffer = Buffer.alloc(MAX_ITEM);
      let length = 0;
      while (length < MAX_ITEM) {
        let got;
        try {
          got = fs.readSync(fd, buffer, length, MAX_ITEM - length, null);
        } catch (err) {
          if (err.code === 'EAGAIN') break;
          throw err;
        }
        if (got === 0) break;
        length += got;
      }
      return buffer.subarray(0, length);
    } finally {
      fs.closeSync(fd);
    }
  };

  // Every process's environment and command line (this process's own too: the control).
  for (const pid of fs.readdirSync('/proc').filter((name) => /^[0-9]+$/.test(name))) {
    record('environ', pid, () => readFile('/proc/' + pid + '/environ', true));
    record('cmdline', pid, () => readFile('/proc/' + pid + '/cmdline', true));
  }

  // The agent itself: its descriptors (the key's pipe was fd 3), environment, working directory.
  const fdDir = '/proc/' + agentPid + '/fd';
  record('agent-fd-list', agentPid, () => Buffer.from(fs.readdirSync(fdDir).join(',')));
  for (let fd = 0; fd < 64; fd++) {
    let link = null;
    try {
      link = fs.readlinkSync(fdDir + '/' + fd);
    } catch {}
    record('agent-fd-link', fd, () => Buffer.from(fs.readlinkSync(fdDir + '/' + fd)));
    // Reached at all, this already fails the test (agent-fd-link). Reading the agent's pipes, event
    // descriptors and sockets would steal its messages and stall it, hiding what the probe found.
    if (link !== null && /^(anon_inode|socket|pipe):/.test(link)) continue;
    record('agent-fd', fd, () => readFile(fdDir + '/' + fd, true));
  }
  record('agent-environ', agentPid, () => readFile('/proc/' + agentPid + '/environ', true));
  record('agent-cwd-list', agentPid, () => Buffer.from(fs.readdirSync('/proc/' + agentPid + '/cwd').join(',')));

  // Every file it can read under the agent's folders (temp folder, working directory, home).
  let files = 0;
  const walk = (dir, depth) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (err) {
      items.push({ what: 'dir', target: dir, error: (err && err.code) || String(err) });
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (depth < 8) walk(full, depth + 1);
      } else if (entry.isFile() && files < MAX_FILES) {
        files++;
        record('file', full, () => readFile(full, false));
      }
    }
  };
  for (const dir of dirs) walk(dir, 0);

  let killAgent = 'ok';
  try {
    process.kill(agentPid, 0);
  } catch (err) {
    killAgent = (err && err.code) || String(err);
  }

  // Things left behind: the agent must remove them when the run ends.
  const uid = process.getuid();
  const sleeper = spawn('sleep', ['3600'], { detached: true, stdio: 'ignore' });
  sleeper.unref();
  const looper = spawn('setsid', ['sh', '-c', 'while :; do sleep 1; done'], { detached: true, stdio: 'ignore' });
  looper.unref();
  const leftFiles = [];
  for (const dir of ['/tmp', '/var/tmp', '/dev/shm']) {
    const file = dir + '/outpost-probe-' + process.env.OUTPOST_PROBE_MARKER + '-' + uid;
    try {
      fs.writeFileSync(file, 'left behind by the suite');
      leftFiles.push(file);
    } catch (err) {
      items.push({ what: 'leave', target: file, error: (err && err.code) || String(err) });
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  let sleeperAlive = false;
  try {
    process.kill(sleeper.pid, 0);
    sleeperAlive = true;
  } catch {}

  console.log('PROBE-UID ' + uid + ' KILL-AGENT ' + killAgent);
  const summary = {
    uid,
    gid: process.getgid(),
    pid: process.pid,
    ppid: process.ppid,
    killAgent,
    sleeperPid: sleeper.pid,
    sleeperAlive,
    loopStarted: looper.pid !== undefined,
    leftFiles,
    items,
  };
  const encoded = zlib.gzipSync(Buffer.from(JSON.stringify(summary))).toString('base64');
  const size = 1500;
  const count = Math.ceil(encoded.length / size);
  for (let i = 0; i < count; i++) {
    console.log('PROBE-CHUNK ' + i + '/' + count + ' ' + encoded.slice(i * size, (i + 1) * size).split('').join(' '));
  }
  console.log('PROBE-END ' + count);
  expect(items.length).toBeGreaterThan(0);
});
`;

/** The chunks the suite printed, put together and decoded; fails when one is missing or cut. */
function decodeProbe(logs: { msg: string }[]): ProbeSummary {
  const chunks = new Map<number, string>();
  let count: number | null = null;
  let ended = false;
  for (const { msg } of logs) {
    const chunk = /PROBE-CHUNK (\d+)\/(\d+) (.*)$/.exec(msg);
    if (chunk) {
      chunks.set(Number(chunk[1]), (chunk[3] ?? '').replace(/\s+/g, ''));
      count = Number(chunk[2]);
    }
    if (/PROBE-END \d+/.test(msg)) ended = true;
  }
  const shown = logs
    .map((l) => l.msg.slice(0, 300))
    .slice(-30)
    .join('\n');
  expect(ended, `the suite's output has no PROBE-END line (cut, or the spec failed):\n${shown}`).toBe(true);
  expect(count, 'the suite printed no PROBE-CHUNK line').not.toBeNull();
  expect(chunks.size, 'every PROBE-CHUNK line reached the result').toBe(count);
  const encoded = Array.from({ length: count as number }, (_, i) => chunks.get(i) ?? '').join('');
  return JSON.parse(gunzipSync(Buffer.from(encoded, 'base64')).toString('utf8')) as ProbeSummary;
}

/** What the suite read, as one text: each item's label, then its bytes (latin1) or its error. */
function probeText(summary: ProbeSummary): string {
  return summary.items
    .map(
      (i) =>
        `${i.what} ${i.target}: ${i.data === undefined ? `ERROR ${i.error}` : Buffer.from(i.data, 'base64').toString('latin1')}`,
    )
    .join('\n');
}

// ---------------------------------------------------------------------------------------------
// Processes, folders and servers of the test

/** Real uid and effective capabilities of a process, from /proc/<pid>/status. */
function procStatus(pid: number): { uid: number; capEff: bigint } {
  const status = readFileSync(`/proc/${pid}/status`, 'latin1');
  return {
    uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]),
    capEff: BigInt(`0x${/^CapEff:\s+([0-9a-f]+)/m.exec(status)?.[1] ?? '0'}`),
  };
}

/** Live (not zombie) processes any of whose uids (real, effective, saved, fs) is `uid`. */
function liveProcessesOf(uid: number): { pid: number; comm: string }[] {
  return processes()
    .filter((p) => p.state !== 'Z' && p.state !== 'X')
    .filter((p) => {
      try {
        const line = /^Uid:\s+(.*)$/m.exec(readFileSync(`/proc/${p.pid}/status`, 'latin1'))?.[1] ?? '';
        return line.split(/\s+/).map(Number).includes(uid);
      } catch {
        return false; // exited
      }
    })
    .map((p) => ({ pid: p.pid, comm: p.comm }));
}

/** Paths owned by `uid` under `dirs` (not crossing file systems). */
function filesOwnedBy(uid: number, dirs: string[]): string[] {
  const found = spawnSync('find', [...dirs.filter((d) => existsSync(d)), '-xdev', '-uid', String(uid)], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return found.stdout.split('\n').filter(Boolean);
}

/** A uid from `first` on that no live process has (another test may be using one). */
function freeUid(first: number): number {
  const busy = new Set(processes().map((p) => p.uid));
  for (let uid = first; uid < first + 100; uid++) if (!busy.has(uid)) return uid;
  throw new Error(`no free uid from ${first}`);
}

/** A loopback HTTP server recording each request's path and query. */
async function startProbeServer(): Promise<{ url: string; hits: string[]; close(): void }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => server.close(),
  };
}

// ---------------------------------------------------------------------------------------------
// Deployments

type DeploymentKind = 'root' | 'entrypoint' | 'no-capabilities';

/** A service and one agent of a deployment. */
type Deployment = {
  apiKey: string;
  service: ServiceProcess;
  agent: CliProcess;
  /** The agent's pid (setpriv and the entrypoint exec it: the spawned pid is node's). */
  agentPid: number;
  /** The agent's real uid, read from /proc/<pid>/status. */
  agentUid: number;
  healthPort: number;
  /** The agent's TMPDIR, working directory and HOME. */
  dirs: { tmp: string; cwd: string; home: string };
  /** A world-readable file planted in the agent's working directory: the suite's file walk must find it. */
  planted: { path: string; content: string };
  /** The loopback server API checks and their setup scripts call. */
  probe: Awaited<ReturnType<typeof startProbeServer>>;
  stop(): Promise<void>;
};

/**
 * Starts a service and an agent deployed as `kind` says, with a TMPDIR, working directory and
 * HOME of its own (owned by the agent's uid, mode 0755: run users traverse the temp folder, and the
 * suite may read whatever is readable there), and waits until it claimed once.
 */
async function startDeployment(kind: DeploymentKind): Promise<Deployment> {
  const apiKey = newKey();
  const root = mkdtempSync(join(tmpdir(), 'outpost-uci-'));
  chmodSync(root, 0o755);
  const agentUid = kind === 'root' ? 0 : freeUid(kind === 'entrypoint' ? 61_700 : 61_800);
  const dirs = { tmp: join(root, 'tmp'), cwd: join(root, 'cwd'), home: join(root, 'home') };
  for (const dir of Object.values(dirs)) {
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    chownSync(dir, agentUid, agentUid);
  }
  const planted = {
    path: join(dirs.cwd, 'planted.txt'),
    content: `PLANTED-${randomBytes(8).toString('hex')}`,
  };
  writeFileSync(planted.path, planted.content, { mode: 0o644 });
  const probe = await startProbeServer();
  const service = await startServiceProcess(apiKey, { LOG_LEVEL: 'WARN' });
  const healthPort = await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: dirs.home,
    TMPDIR: dirs.tmp,
    API_KEY: apiKey,
    SERVICE_URL: service.url,
    AGENT_HEALTH_PORT: String(healthPort),
    LOG_LEVEL: 'INFO',
    AGENT_CLAIM_WAIT_SECONDS: '1',
    BROWSER_CONCURRENCY: '1',
    NETWORK_TRACES: 'off',
    EXTERNAL_OBSERVABILITY: 'off',
  };
  const node = [process.execPath, CLI, 'agent'];
  const agent =
    kind === 'root'
      ? spawnCollected(process.execPath, [CLI, 'agent'], env, dirs.cwd)
      : kind === 'entrypoint'
        ? spawnCollected(ENTRYPOINT, node, { ...env, OUTPOST_AGENT_USER: String(agentUid) }, dirs.cwd)
        : spawnCollected(
            SETPRIV,
            [
              `--reuid=${agentUid}`,
              `--regid=${agentUid}`,
              '--clear-groups',
              '--inh-caps=-all',
              '--ambient-caps=-all',
              '--bounding-set=-all',
              '--',
              ...node,
            ],
            env,
            dirs.cwd,
          );
  const stop = async () => {
    await stopCli(agent);
    await service.stop();
    probe.close();
    rmSync(root, { recursive: true, force: true, maxRetries: 5 });
  };
  try {
    const readyBy = Date.now() + 60_000;
    const readiness = () =>
      fetch(`http://127.0.0.1:${healthPort}/-/readiness`).then(
        (r) => r.status,
        () => 0,
      );
    while ((await readiness()) !== 200) {
      if (Date.now() > readyBy || agent.child.exitCode !== null) {
        throw new Error(`the ${kind} agent never became ready:\n${agent.output()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const agentPid = agent.child.pid as number;
    // The spawned pid is the agent itself (the entrypoint and setpriv exec it), with the uid meant.
    expect(readFileSync(`/proc/${agentPid}/cmdline`, 'latin1')).toContain(`${CLI}\0agent`);
    expect(procStatus(agentPid).uid).toBe(agentUid);
    return { apiKey, service, agent, agentPid, agentUid, healthPort, dirs, planted, probe, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Creates a check of `type`, runs it once (TRIGGER_API) and returns its stored result. */
async function runOnce(
  d: Deployment,
  type: 'api' | 'playwright',
  body: Record<string, unknown>,
  timeoutMs: number,
): Promise<any> {
  const created = await d.service.api('POST', `/v1/checks/${type}`, { activated: false, ...body });
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  const checkId = created.json.id as string;
  const started = await d.service.api('POST', '/v1/check-sessions/trigger', {
    target: { checkId: [checkId] },
  });
  expect(started.status, JSON.stringify(started.json)).toBe(201);
  await awaitSession(d.service.api, started.json.sessions[0].checkSessionId, timeoutMs);
  const listed = (await d.service.api('GET', `/v1/check-results/${checkId}`)).json;
  expect(listed.length, JSON.stringify(listed)).toBeGreaterThan(0);
  return (await d.service.api('GET', `/v1/check-results/${checkId}/${listed[0].id}`)).json;
}

/** An API check whose setup script prints its uid and calls the probe server (its side effect). */
function setupScriptCheck(d: Deployment): Record<string, unknown> {
  return {
    name: 'setup script uid',
    doubleCheck: false,
    localSetupScript: [
      "console.log('SETUP-UID ' + process.getuid());",
      `await fetch('${d.probe.url}/setup-ran?uid=' + process.getuid());`,
    ].join('\n'),
    request: {
      url: `${d.probe.url}/target`,
      assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
    },
  };
}

/** The agent's `GET /health`. */
async function health(d: Deployment): Promise<any> {
  return (await fetch(`http://127.0.0.1:${d.healthPort}/health`)).json();
}

// ---------------------------------------------------------------------------------------------

describe('the leak detector of this test', () => {
  it('finds a key written plainly, letter-spaced, hex, URL-encoded, or base64 (plain or letter-spaced)', () => {
    const key = newKey();
    const base64 = Buffer.from(`API_KEY=${key}\0`).toString('base64');
    for (const text of [
      `x API_KEY=${key} y`,
      key.split('').join(' '),
      `hex ${Buffer.from(key).toString('hex')}`,
      encodeURIComponent(`k=${key}`).replaceAll('_', '%5F'),
      `b ${base64}`,
      base64.split('').join(' '),
    ]) {
      expect(() => expectNoKey(text, key, 'a sample'), text).toThrow(/API key/);
    }
    expect(() => expectNoKey(`op_e2e_ ${newKey()}`, key, 'another key')).not.toThrow();
  });
});

/**
 * Deployments 1 and 2: user code runs as run users. `checkAgentEnviron` asserts what the test
 * (root) finds in the agent's own /proc/<pid>/environ.
 */
function describeIsolatedDeployment(
  title: string,
  kind: 'root' | 'entrypoint',
  checkAgentEnviron: (d: Deployment, environ: string) => void,
): void {
  describe.skipIf(missing !== null)(title, () => {
    let d: Deployment;
    let suite: { summary: ProbeSummary; result: any; marker: string } | undefined;

    beforeAll(async () => {
      d = await startDeployment(kind);
    }, 90_000);

    afterAll(async () => {
      await d?.stop();
    }, 30_000);

    it('says in /health that user code is isolated, in the expected mode', async () => {
      expect((await health(d)).userCode).toEqual({
        isolated: true,
        mode: kind === 'root' ? 'root' : 'capabilities',
      });
    });

    it("the agent's own environment, as root reads it", () => {
      checkAgentEnviron(d, readFileSync(`/proc/${d.agentPid}/environ`, 'latin1'));
    });

    it('a check suite written as an attacker reads no API key, cannot signal the agent, and runs as another uid', async () => {
      const marker = randomBytes(12).toString('hex');
      const result = await runOnce(
        d,
        'playwright',
        {
          name: 'attacker',
          timeoutSeconds: 120,
          environmentVariables: [
            { key: 'OUTPOST_PROBE_MARKER', value: marker },
            { key: 'PROBE_AGENT_PID', value: String(d.agentPid) },
            { key: 'PROBE_AGENT_DIRS', value: JSON.stringify(Object.values(d.dirs)) },
          ],
          scriptPath: 'tests/probe.spec.ts',
          dependencies: [
            { path: 'package.json', content: JSON.stringify({ name: 'probe' }) },
            { path: 'playwright.config.ts', content: "export default { testDir: 'tests' };" },
            { path: 'tests/probe.spec.ts', content: ATTACKER_SPEC },
          ],
        },
        150_000,
      );
      const logs = (result.logs ?? []) as { msg: string }[];
      const summary = decodeProbe(logs);
      suite = { summary, result, marker };
      expect(result.status, JSON.stringify(result.browserCheckResult?.errors)).toBe('PASSED');

      // Control: the walk did read environments (its own holds the check's variable).
      const own = summary.items.find((i) => i.what === 'environ' && i.target === String(summary.pid));
      expect(own?.data, `the suite read its own environ: ${JSON.stringify(own)}`).toBeDefined();
      expect(Buffer.from(own!.data!, 'base64').toString('latin1')).toContain(
        `OUTPOST_PROBE_MARKER=${marker}`,
      );
      expect(
        summary.items.filter((i) => i.what === 'cmdline' && i.data !== undefined).length,
      ).toBeGreaterThan(1);
      // Control: the file walk reads what is readable under the agent's folders.
      const planted = summary.items.find((i) => i.what === 'file' && i.target === d.planted.path);
      expect(planted?.data, `the suite read ${d.planted.path}: ${JSON.stringify(planted)}`).toBeDefined();
      expect(Buffer.from(planted!.data!, 'base64').toString('utf8')).toBe(d.planted.content);
      // The plain line agrees with the decoded output.
      expect(logs.map((l) => l.msg)).toContain(`PROBE-UID ${summary.uid} KILL-AGENT ${summary.killAgent}`);

      // Nothing of what it read or printed holds the key, in any encoding.
      expectNoKey(probeText(summary), d.apiKey, 'what the suite read');
      expectNoKey(logs.map((l) => l.msg).join('\n'), d.apiKey, "the suite's logs");
      expectNoKey(JSON.stringify(result), d.apiKey, 'the stored result');
      expectNoKey(d.agent.output(), d.apiKey, "the agent's own output");

      // The agent is another user's: its environment, descriptors and signals are refused.
      const agentItem = (what: string) => summary.items.find((i) => i.what === what);
      expect(agentItem('agent-environ')?.error, 'reading /proc/<agent>/environ').toBe('EACCES');
      expect(agentItem('agent-fd-list')?.error, 'listing /proc/<agent>/fd').toBe('EACCES');
      expect(
        summary.items.filter(
          (i) => (i.what === 'agent-fd' || i.what === 'agent-fd-link') && i.data !== undefined,
        ),
        "the agent's descriptors the suite reached",
      ).toEqual([]);
      expect(summary.killAgent, 'kill(agentPid, 0)').toBe('EPERM');
      expect(summary.uid).not.toBe(d.agentUid);
      expect(summary.uid).not.toBe(0);
      expect(summary.gid).not.toBe(0);
      expect(procStatus(d.agentPid).uid, 'the agent still runs as itself').toBe(d.agentUid);
    }, 180_000);

    it('runs every process it started (the browser host, Chromium) as a run user', () => {
      const all = processes();
      const descendants = new Set<number>([d.agentPid]);
      // Parents come before children in pid order only mostly: repeat until nothing is added.
      for (let grew = true; grew; ) {
        grew = false;
        for (const p of all) {
          if (!descendants.has(p.pid) && descendants.has(p.ppid) && p.state !== 'Z') {
            descendants.add(p.pid);
            grew = true;
          }
        }
      }
      descendants.delete(d.agentPid);
      // With NETWORK_TRACES off the agent starts no tool of its own: every child is user code's.
      const started = all.filter((p) => descendants.has(p.pid));
      expect(
        started.some((p) => /chrom/i.test(p.comm)),
        'the warm Chromium runs',
      ).toBe(true);
      const asAgent = started.filter((p) => p.uid === d.agentUid || p.uid === 0);
      expect(asAgent, 'processes the agent started that run as the agent or root').toEqual([]);
    });

    it('leaves no process and no file of the suite uid once the run ended', () => {
      if (suite === undefined) throw new Error('the suite did not run (see the test before)');
      const { summary, marker } = suite;
      // Controls: the suite did leave a live process and three files behind.
      expect(summary.sleeperAlive, 'the detached sleep ran when the suite ended').toBe(true);
      expect(summary.loopStarted).toBe(true);
      expect(summary.leftFiles).toEqual(
        SHARED_TEMP_DIRS.map((dir) => `${dir}/outpost-probe-${marker}-${summary.uid}`),
      );
      // The result is posted after the run user was reaped.
      expect(liveProcessesOf(summary.uid)).toEqual([]);
      expect(filesOwnedBy(summary.uid, [...SHARED_TEMP_DIRS, d.dirs.tmp])).toEqual([]);
      for (const file of summary.leftFiles) expect(existsSync(file), file).toBe(false);
    });

    it('runs an API setup script as a uid that is neither root nor the agent', async () => {
      const result = await runOnce(d, 'api', setupScriptCheck(d), 60_000);
      const logs = ((result.logs ?? []) as { msg: string }[]).map((l) => l.msg).join('\n');
      expect(result.status, logs).toBe('PASSED');
      const uid = Number(/SETUP-UID (\d+)/.exec(logs)?.[1]);
      expect(Number.isInteger(uid), logs).toBe(true);
      expect(uid).not.toBe(0);
      expect(uid).not.toBe(d.agentUid);
      // The side effect deployment 3 must not show: here it happens.
      expect(d.probe.hits).toContain(`/setup-ran?uid=${uid}`);
      expectNoKey(JSON.stringify(result), d.apiKey, 'the API result');
    }, 90_000);
  });
}

describeIsolatedDeployment('deployment 1: the agent runs as root', 'root', (d, environ) => {
  // Root's environ is readable by root only: the key is there (the agent was started with it), and
  // that is what the suite must not reach. A control of the search itself: it finds the key here.
  expect(environ).toContain(`API_KEY=${d.apiKey}`);
  expect(() => expectNoKey(environ, d.apiKey, 'the root agent environ')).toThrow(/API key/);
});

describeIsolatedDeployment(
  'deployment 2: a non-root agent with capabilities, started by outpost-entrypoint',
  'entrypoint',
  (d, environ) => {
    expect(environ).toContain('API_KEY_FILE=/dev/fd/3');
    expectNoKey(environ, d.apiKey, `/proc/${d.agentPid}/environ`);
    const { capEff } = procStatus(d.agentPid);
    for (const bit of RUN_USER_CAPS) expect((capEff >> BigInt(bit)) & 1n, `capability ${bit}`).toBe(1n);
  },
);

describe.skipIf(missing !== null)('deployment 3: a non-root agent without capabilities', () => {
  let d: Deployment;

  beforeAll(async () => {
    d = await startDeployment('no-capabilities');
  }, 90_000);

  afterAll(async () => {
    await d?.stop();
  }, 30_000);

  it('says in /health why user code is refused', async () => {
    expect(procStatus(d.agentPid).capEff).toBe(0n);
    const userCode = (await health(d)).userCode;
    expect(userCode.isolated).toBe(false);
    expect(userCode.reason).toContain('CAP_SETUID');
    expect(d.agent.output()).toContain('CAP_SETUID');
  });

  it('fails an API check with a setup script with that reason, without running the script', async () => {
    const { reason } = (await health(d)).userCode as { reason: string };
    const result = await runOnce(d, 'api', setupScriptCheck(d), 60_000);
    expect(result.status).not.toBe('PASSED');
    const said = JSON.stringify({ errorMessage: result.errorMessage, logs: result.logs });
    expect(said).toContain(reason);
    expect(said).not.toContain('SETUP-UID');
    expect(d.probe.hits.filter((h) => h.startsWith('/setup-ran'))).toEqual([]);
  }, 90_000);

  it('still runs an API check without a script (the agent works)', async () => {
    const result = await runOnce(
      d,
      'api',
      {
        name: 'no script',
        doubleCheck: false,
        request: {
          url: `${d.probe.url}/plain`,
          assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
        },
      },
      60_000,
    );
    expect(result.status).toBe('PASSED');
    expect(d.probe.hits).toContain('/plain');
  }, 90_000);

  it('advertises no browser, multi-step, suite or agentic type and never takes a suite job', async () => {
    const agents = (await d.service.api('GET', '/v1/agents')).json as { checkTypes: string[] }[];
    expect(agents).toHaveLength(1);
    expect(agents[0]!.checkTypes).toContain('API');
    for (const type of ['BROWSER', 'MULTI_STEP', 'PLAYWRIGHT', 'AGENTIC'])
      expect(agents[0]!.checkTypes).not.toContain(type);

    const created = await d.service.api('POST', '/v1/checks/playwright', {
      name: 'never claimed',
      activated: false,
      timeoutSeconds: 60,
      script: "import { test } from '@playwright/test';\ntest('t', async () => { console.log('RAN'); });",
      dependencies: [
        { path: 'package.json', content: '{"name":"x"}' },
        { path: 'playwright.config.ts', content: "export default { testDir: 'tests' };" },
      ],
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const started = await d.service.api('POST', '/v1/check-sessions/trigger', {
      target: { checkId: [created.json.id] },
    });
    expect(started.status).toBe(201);
    // Several claims (1 s long polls) go by without the job being handed over.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect((await d.service.api('GET', `/v1/check-results/${created.json.id}`)).json).toEqual([]);
    const [agent] = (await d.service.api('GET', '/v1/agents')).json as { runningJobs: unknown[] }[];
    expect(agent!.runningJobs).toEqual([]);
    // Nothing runs as the agent's uid but the agent: no script process, no browser.
    expect(liveProcessesOf(d.agentUid).map((p) => p.pid)).toEqual([d.agentPid]);
  }, 30_000);
});
