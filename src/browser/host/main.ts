/**
 * The bootstrap of a browser host (docs/architecture.md, "Browser checks"), bundled to
 * `host-child.cjs` (src/common/compiled-child.ts): one warm Chromium of one runtime for one
 * account's checks, which their runners connect to.
 *
 * BrowserHost starts it as `node host-child.cjs <runtimeDir>` in a private temp dir (HOME,
 * TMPDIR), as a run user of its own (never the agent's uid). It loads the runtime's own
 * playwright-core, launches Chromium (CHROMIUM_PATH) behind `launchServer` on 127.0.0.1 with an
 * unguessable path, says `ready` on fd 3 (newline-delimited JSON, HostMessage of host.ts) and
 * then answers `ping` commands read from stdin with a real probe of the browser. Chromium
 * exiting ends this process; so does the end of stdin (the agent closed it, or died).
 *
 * The server is hardened before it serves (keepConnectionsApart, artifactsPerConnection): a
 * connection reaches only its own contexts, may not use a path of this machine nor learn one, and
 * what the server writes for it (traces, downloads, videos) lies in a folder of its own, removed
 * when it disconnects.
 *
 * No user code ever runs here. Its bundle imports only `node:` built-ins; the runtime's
 * playwright-core is loaded at run time.
 */
import crypto from 'node:crypto';
import nodeModule from 'node:module';
import os from 'node:os';
import path from 'node:path';
// Types only, from the first runtime: each runtime's own playwright-core is what is loaded.
import type * as PlaywrightCore from '../../../runtimes/2026.04/node_modules/playwright-core/index.js';
import { openChannel } from '../../common/child/channel.js';
import type { HostCommand, HostMessage } from '../host.js';
import { artifactsPerConnection } from './artifacts-per-connection.js';
import { keepConnectionsApart } from './connections-apart.js';
import { provideFfmpeg } from './ffmpeg.js';
import { withHiddenPath } from './hidden-path.js';
import { createProbe, type Probe } from './probe.js';

/** How long Chromium may take to start, ms. */
const LAUNCH_TIMEOUT_MS = 30_000;
/** How long closing the server (and Chromium) may take before this process exits anyway, ms. */
const CLOSE_TIMEOUT_MS = 5_000;
/** Longest command line read from stdin, bytes (commands are ≈ 50 bytes). */
const MAX_COMMAND_BYTES = 4096;

const runtimeDir = process.argv[2] ?? '';
const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
/** The host → agent channel. */
const channel = openChannel<HostMessage>();

let closing = false;

/** Chromium behind Playwright's server on 127.0.0.1 at an unguessable path, which answers nothing else. */
function launchServer(playwright: typeof PlaywrightCore) {
  const wsPath = `/${crypto.randomBytes(32).toString('hex')}`;
  return withHiddenPath(() =>
    playwright.chromium.launchServer({
      executablePath: chromiumPath,
      host: '127.0.0.1',
      port: 0,
      wsPath,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: LAUNCH_TIMEOUT_MS,
    }),
  );
}

/** Answers one command line of the agent (a line that is not JSON is ignored). */
function handleCommand(line: string, probe: Probe, shutDown: () => Promise<void>): void {
  let command: HostCommand;
  try {
    command = JSON.parse(line) as HostCommand;
  } catch {
    return;
  }
  if (command.t === 'close') {
    void shutDown();
  } else if (command.t === 'selftest') {
    const { id } = command;
    probe.selfTest(command.timeoutMs).then(
      (screenshotBytes) => channel.send({ t: 'selftest', id, ok: true, screenshotBytes }),
      (err: Error) =>
        channel.send({
          t: 'selftest',
          id,
          ok: false,
          error: (err.message.split('\n')[0] ?? 'failed').slice(0, 1024),
        }),
    );
  } else if (command.t === 'ping') {
    const { id } = command;
    probe.healthProbe(command.timeoutMs).then(
      () => channel.send({ t: 'pong', id, ok: true }),
      (err: Error) =>
        channel.send({ t: 'pong', id, ok: false, error: err.message.split('\n')[0] ?? 'failed' }),
    );
  }
}

/** Reads command lines from stdin (a line past 4 KiB is dropped); its end or an error shuts down. */
function readCommands(probe: Probe, shutDown: () => Promise<void>): void {
  let pending = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (text: string) => {
    pending += text;
    for (let at = pending.indexOf('\n'); at !== -1; at = pending.indexOf('\n')) {
      handleCommand(pending.slice(0, at), probe, shutDown);
      pending = pending.slice(at + 1);
    }
    if (pending.length > MAX_COMMAND_BYTES) pending = '';
  });
  // The agent closed stdin or died: nobody is left to serve.
  process.stdin.on('end', () => void shutDown());
  process.stdin.on('error', () => void shutDown());
}

async function main(): Promise<void> {
  const runtimeRequire = nodeModule.createRequire(path.join(runtimeDir, 'package.json'));
  const playwrightDir = path.dirname(runtimeRequire.resolve('playwright-core/package.json'));
  let videoNote: string | null;
  try {
    videoNote = provideFfmpeg(playwrightDir);
  } catch (err) {
    videoNote = `ffmpeg could not be provided: ${(err as Error).message}`;
  }
  const playwright = runtimeRequire('playwright-core') as typeof PlaywrightCore;
  keepConnectionsApart(playwrightDir);
  // The host's temp dir is its own (its uid's, mode 0700): each connection's folder is made in it.
  artifactsPerConnection(playwrightDir, os.tmpdir());
  const playwrightVersion = (runtimeRequire('playwright-core/package.json') as { version: string }).version;
  const server = await launchServer(playwright);
  const wsEndpoint = server.wsEndpoint();
  // Playwright emits (exitCode, signal) though its types declare no arguments.
  server.on('close', (...args: unknown[]) => {
    if (closing) return;
    const [code, signal] = args as [number | null, string | null];
    channel.send({ t: 'closed', reason: `Chromium exited (${signal === null ? `code ${code}` : signal})` });
    process.exit(1);
  });
  const probe = createProbe(playwright, wsEndpoint);
  const browser = await probe.connect(LAUNCH_TIMEOUT_MS);
  const browserPid = server.process().pid;
  if (browserPid === undefined) throw new Error('Chromium has no process id');
  const shutDown = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    const force = setTimeout(() => process.exit(0), CLOSE_TIMEOUT_MS);
    force.unref();
    await probe.close();
    await server.close().catch(() => {});
    process.exit(0);
  };
  readCommands(probe, shutDown);
  channel.send({
    t: 'ready',
    wsEndpoint,
    browserVersion: browser.version(),
    playwrightVersion,
    browserPid,
    videoNote,
  });
}

main().catch((err: Error) => {
  channel.send({ t: 'error', message: (err.message ?? String(err)).slice(0, 4096) });
  process.exit(1);
});
