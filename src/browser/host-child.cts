/**
 * The bootstrap of a browser host (docs/architecture.md, "Browser checks"), compiled to
 * `host-child.cjs`: one warm Chromium per runtime, which the runners of browser checks connect to.
 *
 * BrowserHost starts it as `node host-child.cjs <runtimeDir>` in a private temp dir (HOME,
 * TMPDIR), as an unprivileged uid when the agent is root. It loads the runtime's own
 * playwright-core, launches Chromium (CHROMIUM_PATH) behind `launchServer` on 127.0.0.1 with an
 * unguessable path, says `ready` on fd 3 (newline-delimited JSON, HostMessage of host.ts) and
 * then answers `ping` commands read from stdin with a real probe of the browser. Chromium
 * exiting ends this process; so does the end of stdin (the agent closed it, or died).
 *
 * No user code ever runs here. It stays self-contained (only type imports of our modules).
 */
import crypto = require('node:crypto');
import fs = require('node:fs');
import http = require('node:http');
import nodeModule = require('node:module');
import os = require('node:os');
import path = require('node:path');
// Types only, from the first runtime: each runtime's own playwright-core is what is loaded.
import type * as PlaywrightCore from '../../runtimes/2026.04/node_modules/playwright-core/index.js';
import type { HostCommand, HostMessage } from './host.js';

/** The host → agent channel. */
const CHANNEL_FD = 3;
/** How long Chromium may take to start, ms. */
const LAUNCH_TIMEOUT_MS = 30_000;
/** How long closing the server (and Chromium) may take before this process exits anyway, ms. */
const CLOSE_TIMEOUT_MS = 5_000;
/** Where Debian's ffmpeg is; Playwright records videos with it. */
const SYSTEM_FFMPEG = '/usr/bin/ffmpeg';
/** Longest command line read from stdin, bytes (commands are ≈ 50 bytes). */
const MAX_COMMAND_BYTES = 4096;

const runtimeDir = process.argv[2] ?? '';
const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const pause = new Int32Array(new SharedArrayBuffer(4));

let closing = false;

/** Writes one message with blocking writes; a gone agent means nothing is left to serve. */
function send(message: HostMessage): void {
  const bytes = Buffer.from(`${JSON.stringify(message)}\n`);
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += fs.writeSync(CHANNEL_FD, bytes, offset);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 1);
        continue;
      }
      process.exit(70);
    }
  }
}

/**
 * Playwright records videos with its own ffmpeg build, looked up as
 * `$PLAYWRIGHT_BROWSERS_PATH/ffmpeg-<revision>/ffmpeg-linux`; the revision is the runtime's
 * playwright-core's (browsers.json). A symlink to Debian's ffmpeg stands in for it, in this
 * host's temp dir, so nothing is downloaded and nothing outside the temp dir is written. Must
 * run before playwright-core is loaded: it reads the variable once.
 *
 * @returns null when video recording works, else why not.
 */
function provideFfmpeg(playwrightDir: string): string | null {
  if (!fs.existsSync(SYSTEM_FFMPEG)) return `${SYSTEM_FFMPEG} is missing: videos cannot be recorded`;
  const browsers = JSON.parse(fs.readFileSync(path.join(playwrightDir, 'browsers.json'), 'utf8')) as {
    browsers: { name: string; revision: string }[];
  };
  const revision = browsers.browsers.find((b) => b.name === 'ffmpeg')?.revision;
  if (revision === undefined) return 'the runtime names no ffmpeg revision: videos cannot be recorded';
  const root = path.join(os.tmpdir(), 'ms-playwright');
  const dir = path.join(root, `ffmpeg-${revision}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.symlinkSync(SYSTEM_FFMPEG, path.join(dir, 'ffmpeg-linux'));
  process.env.PLAYWRIGHT_BROWSERS_PATH = root;
  return null;
}

/**
 * Runs `launch` (which starts the server) and makes every HTTP server it creates answer plain
 * requests with 404. Playwright's server answers `GET /json` with its unguessable WebSocket
 * path, which would let any local process (a sandboxed script included) find and drive the
 * browser; only the WebSocket upgrade at that path is served.
 *
 * @throws Error when no server was created (a Playwright that builds it otherwise): the host
 *   must not serve then.
 */
async function withHiddenPath<T>(launch: () => Promise<T>): Promise<T> {
  const servers: http.Server[] = [];
  const createServer = http.createServer;
  (http as { createServer: unknown }).createServer = (...args: Parameters<typeof http.createServer>) => {
    const server = createServer(...args);
    servers.push(server);
    return server;
  };
  let result: T;
  try {
    result = await launch();
  } finally {
    http.createServer = createServer;
  }
  if (servers.length === 0)
    throw new Error('Playwright created no HTTP server whose requests can be refused');
  for (const server of servers) {
    server.removeAllListeners('request');
    server.on('request', (_request: http.IncomingMessage, response: http.ServerResponse) => {
      response.statusCode = 404;
      response.end();
    });
  }
  return result;
}

/**
 * CDP methods a check may not send through a page's CDP session (`context.newCDPSession(page)`):
 * the Target domain reaches every other target of the shared browser (other checks' pages,
 * `Target.attachToBrowserTarget`), Browser acts on the whole browser (`Browser.crash`), Storage
 * takes any browser context's id (other checks' cookies), Tracing records beyond the page.
 */
const SHARED_CDP_DOMAINS = /^(Target|Browser|Storage|Tracing)\./;

/**
 * Keeps each connection to this shared browser to its own contexts. Playwright's server isolates
 * the contexts of one connection from another's, but hands out browser-wide CDP sessions
 * (`browser.newBrowserCDPSession()`), browser-wide tracing, page CDP sessions that can send
 * Target commands, and contexts kept for reuse across connections: with them a check's script
 * could list, attach to and read the pages of checks running at the same time (or find the
 * context of the one before). Those server methods are replaced, in this process only
 * (the server runs here), with ones that refuse.
 *
 * @throws Error when the runtime's playwright-core has not these classes (a version this host
 *   does not know): the host must not serve then.
 */
function keepConnectionsApart(playwrightDir: string): void {
  const dispatchers = path.join(playwrightDir, 'lib', 'server', 'dispatchers');
  // An absolute path: the same module instances the server uses, past the package's exports map.
  const { BrowserDispatcher } = require(path.join(dispatchers, 'browserDispatcher.js')) as {
    BrowserDispatcher?: { prototype: Record<string, unknown> };
  };
  const { CDPSessionDispatcher } = require(path.join(dispatchers, 'cdpSessionDispatcher.js')) as {
    CDPSessionDispatcher?: { prototype: Record<string, unknown> };
  };
  const browser = BrowserDispatcher?.prototype;
  const session = CDPSessionDispatcher?.prototype;
  if (
    typeof browser?.newBrowserCDPSession !== 'function' ||
    typeof browser.startTracing !== 'function' ||
    typeof browser.newContextForReuse !== 'function' ||
    typeof session?.send !== 'function'
  ) {
    throw new Error(
      "the runtime's playwright-core has no known way to keep the checks sharing its browser apart",
    );
  }
  const shared = 'the browser is shared with other checks';
  browser.newBrowserCDPSession = async () => {
    throw new Error(`browser.newBrowserCDPSession() is not available: ${shared}`);
  };
  // A context kept for reuse outlives its connection: the next check would find the last one's.
  browser.newContextForReuse = async () => {
    throw new Error(`reusing browser contexts is not available: ${shared}`);
  };
  browser.startTracing = async () => {
    throw new Error(`browser.startTracing() is not available: ${shared}; use context.tracing`);
  };
  const send = session.send as (this: unknown, params: { method?: unknown }, progress: unknown) => unknown;
  session.send = async function (this: unknown, params: { method?: unknown }, progress: unknown) {
    const method = typeof params?.method === 'string' ? params.method : '';
    if (method === '' || SHARED_CDP_DOMAINS.test(method)) {
      throw new Error(`CDP method ${method || '(none)'} is not available: ${shared}`);
    }
    return send.call(this, params, progress);
  };
}

/** `promise`, or a rejection after `timeoutMs`. */
function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${timeoutMs} ms`)), timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
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
  const playwrightVersion = (runtimeRequire('playwright-core/package.json') as { version: string }).version;
  const wsPath = `/${crypto.randomBytes(32).toString('hex')}`;
  const server = await withHiddenPath(() =>
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
  const wsEndpoint = server.wsEndpoint();
  // Playwright emits (exitCode, signal) though its types declare no arguments.
  server.on('close', (...args: unknown[]) => {
    if (closing) return;
    const [code, signal] = args as [number | null, string | null];
    send({ t: 'closed', reason: `Chromium exited (${signal === null ? `code ${code}` : signal})` });
    process.exit(1);
  });

  /** This host's own client of its server: probes go the way runners' connections go. */
  let probe: PlaywrightCore.Browser | null = null;
  const connect = async (timeoutMs: number): Promise<PlaywrightCore.Browser> => {
    if (probe?.isConnected()) return probe;
    probe = await playwright.chromium.connect(wsEndpoint, { timeout: timeoutMs });
    return probe;
  };
  const browser = await connect(LAUNCH_TIMEOUT_MS);
  const browserPid = server.process().pid;
  if (browserPid === undefined) throw new Error('Chromium has no process id');

  /** Opens and closes a browser context through the server: Chromium and the server both answer. */
  const healthProbe = async (timeoutMs: number): Promise<void> => {
    const started = Date.now();
    await within(
      (async () => {
        const client = await connect(timeoutMs);
        const context = await client.newContext();
        await context.close();
      })(),
      Math.max(1, timeoutMs - (Date.now() - started)),
      'opening and closing a browser context',
    );
  };

  /**
   * The runtime's compatibility check: a page through the server, with `data:` content, a
   * script evaluated in it and a screenshot taken, as a browser check would.
   *
   * @returns the screenshot's size, bytes.
   */
  const selfTest = (timeoutMs: number): Promise<number> =>
    within(
      (async () => {
        const client = await connect(timeoutMs);
        const context = await client.newContext();
        try {
          const page = await context.newPage();
          await page.goto('data:text/html,<title>outpost</title><h1 id="h">ready</h1>');
          // A string, evaluated in the page: this file is compiled without the DOM's types.
          const text = await page.evaluate("document.getElementById('h')?.textContent");
          if (text !== 'ready') throw new Error(`the page evaluated to ${JSON.stringify(text)}, not "ready"`);
          const png = await page.screenshot();
          if (png.subarray(1, 4).toString('latin1') !== 'PNG') throw new Error('the screenshot is not a PNG');
          return png.length;
        } finally {
          await context.close().catch(() => {});
        }
      })(),
      timeoutMs,
      'the compatibility check',
    );

  const shutDown = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    const force = setTimeout(() => process.exit(0), CLOSE_TIMEOUT_MS);
    force.unref();
    await probe?.close().catch(() => {});
    await server.close().catch(() => {});
    process.exit(0);
  };

  const handle = (line: string): void => {
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
      selfTest(command.timeoutMs).then(
        (screenshotBytes) => send({ t: 'selftest', id, ok: true, screenshotBytes }),
        (err: Error) =>
          send({
            t: 'selftest',
            id,
            ok: false,
            error: (err.message.split('\n')[0] ?? 'failed').slice(0, 1024),
          }),
      );
    } else if (command.t === 'ping') {
      const { id } = command;
      healthProbe(command.timeoutMs).then(
        () => send({ t: 'pong', id, ok: true }),
        (err: Error) => send({ t: 'pong', id, ok: false, error: err.message.split('\n')[0] ?? 'failed' }),
      );
    }
  };
  let pending = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (text: string) => {
    pending += text;
    for (let at = pending.indexOf('\n'); at !== -1; at = pending.indexOf('\n')) {
      handle(pending.slice(0, at));
      pending = pending.slice(at + 1);
    }
    if (pending.length > MAX_COMMAND_BYTES) pending = '';
  });
  // The agent closed stdin or died: nobody is left to serve.
  process.stdin.on('end', () => void shutDown());
  process.stdin.on('error', () => void shutDown());

  send({
    t: 'ready',
    wsEndpoint,
    browserVersion: browser.version(),
    playwrightVersion,
    browserPid,
    videoNote,
  });
}

main().catch((err: Error) => {
  send({ t: 'error', message: (err.message ?? String(err)).slice(0, 4096) });
  process.exit(1);
});
