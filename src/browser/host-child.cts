/**
 * The bootstrap of a browser host (docs/architecture.md, "Browser checks"), compiled to
 * `host-child.cjs`: one warm Chromium of one runtime for one account's checks, which their runners
 * connect to.
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
 * The CDP domains a check may use through a page's CDP session (`context.newCDPSession(page)`):
 * an allow-list. Each of these acts on the session's page only (its frames, its renderer, the
 * network stack and storage of its own browser context): performance and memory figures
 * (`Performance`, `Profiler`, `HeapProfiler`, `PerformanceTimeline`), network conditions and
 * interception (`Network`, `Fetch`), the page itself (`Page`, `Runtime`, `DOM`, `CSS`, `Input`,
 * `Emulation`, …). Every other domain is refused: `Target` and `Browser` reach every target and
 * context of the browser, `Storage` takes any context's id, `Tracing`, `IO`, `SystemInfo`,
 * `Memory` and `Tethering` act on the whole browser, `Extensions`, `PWA` and `FileSystem` take or
 * return paths, and the rest (`Cast`, `FedCm`, `BluetoothEmulation`, …) no check needs.
 */
const CDP_ALLOWED_DOMAINS: ReadonlySet<string> = new Set([
  'Accessibility',
  'Animation',
  'Audits',
  'CacheStorage',
  'Console',
  'CSS',
  'Debugger',
  'DOM',
  'DOMDebugger',
  'DOMSnapshot',
  'DOMStorage',
  'Emulation',
  'EventBreakpoints',
  'Fetch',
  'HeapProfiler',
  'IndexedDB',
  'Input',
  'Inspector',
  'LayerTree',
  'Log',
  'Media',
  'Network',
  'Overlay',
  'Page',
  'Performance',
  'PerformanceTimeline',
  'Preload',
  'Profiler',
  'Runtime',
  'Schema',
  'WebAudio',
  'WebAuthn',
]);

/** Methods of allowed domains that are refused all the same, with why. */
const CDP_REFUSED_METHODS: ReadonlyMap<string, string> = new Map([
  ['DOM.setFileInputFiles', "it hands a page files of the browser's machine"],
  ['DOM.getFileInfo', "it tells where a file lies on the browser's machine"],
  ['Page.setDownloadBehavior', "it names a folder of the browser's machine"],
  ['Network.loadNetworkResource', 'it loads any URL, file: ones too, outside the page'],
]);

/**
 * Parameter names that hold a file or folder path in CDP (`files`, `filePath`, `downloadPath`,
 * `localPath`, `path`, `dir`, …): a method given one is refused, whatever its domain, so a method
 * that takes a path tomorrow is refused too. Checked on the top-level parameters (and the drag data
 * of `Input.dispatchDragEvent`), not inside values a script passes through (`Runtime.callFunctionOn`
 * arguments).
 */
const CDP_PATH_PARAMETER =
  /^(path|paths|files?|filePaths?|fileNames?|localPaths?|localDirectory|downloadPath|dir|directory|folder|[a-z]+Path|[a-z]+Dir|[a-z]+Directory|[a-z]+Folder)$/;

/** Methods whose `path` parameter is a cookie's path, not a file's. */
const CDP_COOKIE_METHODS: ReadonlySet<string> = new Set([
  'Network.setCookie',
  'Network.setCookies',
  'Network.deleteCookies',
]);

/**
 * The URL schemes a check may navigate to or load (`page.goto`, CDP `Page.navigate`, any CDP
 * parameter named `url`): not `file:`, `filesystem:`, `chrome:` or `devtools:`, which read the
 * browser's machine or the browser's own pages.
 */
const ALLOWED_URL_SCHEMES: ReadonlySet<string> = new Set([
  'http',
  'https',
  'ws',
  'wss',
  'data',
  'about',
  'blob',
  'javascript',
]);

/** The scheme of `url` when it names one (`file`), lower case; null for a URL without a scheme. */
function schemeOf(url: string): string | null {
  return /^\s*([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase() ?? null;
}

/** Why navigating to or loading `url` is refused; null when it may be. */
function urlRefusal(url: string): string | null {
  const scheme = schemeOf(url);
  return scheme === null || ALLOWED_URL_SCHEMES.has(scheme)
    ? null
    : `${scheme}: URLs are not available to checks (only ${[...ALLOWED_URL_SCHEMES].join(', ')})`;
}

/**
 * Why a page's CDP session may not send `method` with `params`, or null when it may: the domain is
 * not allowed, the method is refused by name, a parameter names a file or folder path, or a URL
 * parameter has a scheme checks may not use.
 */
function cdpRefusal(method: string, params: unknown): string | null {
  const domain = method.split('.')[0] ?? '';
  if (method === '' || !CDP_ALLOWED_DOMAINS.has(domain)) {
    return `the browser is shared with other checks, which may use the CDP domains ${[...CDP_ALLOWED_DOMAINS].join(', ')} only`;
  }
  const refused = CDP_REFUSED_METHODS.get(method);
  if (refused !== undefined) return refused;
  if (params === null || typeof params !== 'object') return null;
  const given = params as Record<string, unknown>;
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined) continue;
    if (CDP_PATH_PARAMETER.test(name) && !(name === 'path' && CDP_COOKIE_METHODS.has(method))) {
      return `its parameter ${name} names a path of the browser's machine`;
    }
    if (/url$/i.test(name) && typeof value === 'string') {
      const why = urlRefusal(value);
      if (why !== null) return why;
    }
  }
  const drag = given.data as { files?: unknown } | undefined;
  if (
    method === 'Input.dispatchDragEvent' &&
    drag !== null &&
    typeof drag === 'object' &&
    drag.files !== undefined
  ) {
    return "its drag data names files of the browser's machine";
  }
  return null;
}

/** A dispatcher class of the server as far as it is patched here: its prototype's methods. */
type Patchable = { prototype: Record<string, unknown> };
/** A dispatcher method: `(params, progress)`, `this` the dispatcher. */
type DispatcherMethod = (this: Any, params: Any, progress: unknown) => Promise<unknown>;
// biome-ignore lint/suspicious/noExplicitAny: Playwright's server internals are untyped here.
type Any = any;

/**
 * The runtime's playwright-core server module `lib/server/<file>` by absolute path (the same module
 * instances the server uses, past the package's exports map), or its `name` export.
 *
 * @throws Error when the module or the export is missing (a version this host does not know).
 */
function serverExport(playwrightDir: string, file: string, name: string): Patchable {
  const exported = (require(path.join(playwrightDir, 'lib', 'server', file)) as Record<string, unknown>)[
    name
  ];
  if (typeof exported !== 'function' || typeof exported.prototype !== 'object') {
    throw new Error(`the runtime's playwright-core has no ${name} in lib/server/${file}`);
  }
  return exported as unknown as Patchable;
}

/**
 * Replaces `cls.prototype[method]` with `replacement`, which gets the original to call.
 *
 * @throws Error when the method does not exist (a version this host does not know).
 */
function patch(
  cls: Patchable,
  method: string,
  replacement: (original: DispatcherMethod) => DispatcherMethod,
): void {
  const original = cls.prototype[method];
  if (typeof original !== 'function') {
    throw new Error(`the runtime's playwright-core has no method ${method} to guard`);
  }
  cls.prototype[method] = replacement(original as DispatcherMethod);
}

/** An error naming the refused call and why. */
function refusal(call: string, why: string): Error {
  return new Error(`${call} is not available: ${why}`);
}

/** Replaces `cls.prototype[method]` with one that always rejects with {@link refusal}(`call`, `why`). */
function refuse(cls: Patchable, method: string, call: string, why: string): void {
  patch(cls, method, () => async () => {
    throw refusal(call, why);
  });
}

/**
 * Keeps each connection to this browser to its own contexts and away from the host's files.
 * Playwright's server isolates the contexts of one connection from another's, but hands out
 * browser-wide CDP sessions (`browser.newBrowserCDPSession()`), browser-wide tracing, page CDP
 * sessions that can send any command, contexts kept for reuse across connections, and calls that
 * take or reveal paths of the server's machine (a download's path, `saveAs` to a server path,
 * `setInputFiles` of server paths, a trace chunk's file names): with them a check's script could
 * list, attach to and read the pages of other checks, or read the traces the server keeps on disk.
 * Those server methods are replaced, in this process only (the server runs here), with ones that
 * refuse with an error naming the call; what a remote client legitimately uses (`saveAsStream`,
 * `setInputFiles` with payloads or uploaded streams, trace chunks as an archive) keeps working.
 *
 * @throws Error when the runtime's playwright-core has not these classes or methods (a version
 *   this host does not know): the host must not serve then.
 */
function keepConnectionsApart(playwrightDir: string): void {
  const shared = 'the browser is shared with other checks';
  const BrowserDispatcher = serverExport(
    playwrightDir,
    'dispatchers/browserDispatcher.js',
    'BrowserDispatcher',
  );
  refuse(BrowserDispatcher, 'newBrowserCDPSession', 'browser.newBrowserCDPSession()', shared);
  // A context kept for reuse outlives its connection: the next check would find the last one's.
  refuse(BrowserDispatcher, 'newContextForReuse', 'reusing browser contexts', shared);
  refuse(BrowserDispatcher, 'startTracing', 'browser.startTracing()', `${shared}; use context.tracing`);
  const CDPSessionDispatcher = serverExport(
    playwrightDir,
    'dispatchers/cdpSessionDispatcher.js',
    'CDPSessionDispatcher',
  );
  patch(
    CDPSessionDispatcher,
    'send',
    (send) =>
      async function (params, progress) {
        const method = typeof params?.method === 'string' ? params.method : '';
        const why = cdpRefusal(method, params?.params);
        if (why !== null) throw refusal(`CDP method ${method || '(none)'}`, why);
        return send.call(this, params, progress);
      },
  );

  // A server path reveals where other connections' traces lie; one given by a client reads or writes there.
  const ArtifactDispatcher = serverExport(
    playwrightDir,
    'dispatchers/artifactDispatcher.js',
    'ArtifactDispatcher',
  );
  refuse(
    ArtifactDispatcher,
    'pathAfterFinished',
    'Artifact.pathAfterFinished (download.path(), video.path())',
    'use saveAs() or createReadStream()',
  );
  refuse(
    ArtifactDispatcher,
    'saveAs',
    "Artifact.saveAs to a path of the browser's machine",
    'a remote client saves through saveAsStream',
  );
  const noLocalFiles = (call: string) => (setInputFiles: DispatcherMethod) =>
    async function (this: Any, params: Any, progress: unknown) {
      if (params?.localPaths !== undefined || params?.localDirectory !== undefined) {
        throw refusal(
          `${call} with paths of the browser's machine (localPaths, localDirectory)`,
          'a remote client uploads the files (payloads or streams)',
        );
      }
      return setInputFiles.call(this, params, progress);
    };
  const FrameDispatcher = serverExport(playwrightDir, 'dispatchers/frameDispatcher.js', 'FrameDispatcher');
  patch(FrameDispatcher, 'setInputFiles', noLocalFiles('Frame.setInputFiles'));
  patch(
    FrameDispatcher,
    'goto',
    (goto) =>
      async function (params, progress) {
        const why = typeof params?.url === 'string' ? urlRefusal(params.url) : null;
        if (why !== null)
          throw refusal(`page.goto(${JSON.stringify(String(params.url).slice(0, 100))})`, why);
        return goto.call(this, params, progress);
      },
  );
  const ElementHandleDispatcher = serverExport(
    playwrightDir,
    'dispatchers/elementHandlerDispatcher.js',
    'ElementHandleDispatcher',
  );
  patch(ElementHandleDispatcher, 'setInputFiles', noLocalFiles('ElementHandle.setInputFiles'));
  const BrowserContextDispatcher = serverExport(
    playwrightDir,
    'dispatchers/browserContextDispatcher.js',
    'BrowserContextDispatcher',
  );
  // The files a remote setInputFiles uploads: their names are joined to a server folder.
  patch(
    BrowserContextDispatcher,
    'createTempFiles',
    (createTempFiles) =>
      async function (params, progress) {
        const names: unknown[] = [
          params?.rootDirName,
          ...(params?.items ?? []).map((item: Any) => item?.name),
        ];
        for (const name of names) {
          if (name === undefined) continue;
          if (typeof name !== 'string' || path.isAbsolute(name) || name.split(/[\\/]/).includes('..')) {
            throw refusal(
              `BrowserContext.createTempFiles of ${JSON.stringify(String(name).slice(0, 100))}`,
              'a file name must stay inside its upload folder',
            );
          }
        }
        return createTempFiles.call(this, params, progress);
      },
  );
  refuse(
    BrowserContextDispatcher,
    'enableRecorder',
    'the recorder (BrowserContext.enableRecorder)',
    "it writes to a path of the browser's machine",
  );
  const TracingDispatcher = serverExport(
    playwrightDir,
    'dispatchers/tracingDispatcher.js',
    'TracingDispatcher',
  );
  patch(
    TracingDispatcher,
    'tracingStopChunk',
    (stopChunk) =>
      async function (params, progress) {
        if (params?.mode === 'entries') {
          throw refusal(
            "Tracing.tracingStopChunk with mode 'entries'",
            "it returns paths of the browser's machine; a remote client takes the archive",
          );
        }
        return stopChunk.call(this, params, progress);
      },
  );
  const PageDispatcher = serverExport(playwrightDir, 'dispatchers/pageDispatcher.js', 'PageDispatcher');
  if (typeof PageDispatcher.prototype.agent === 'function') {
    refuse(
      PageDispatcher,
      'agent',
      'page agents',
      "they read and write cache files at paths of the browser's machine",
    );
  }
  // Not exposed to remote connections (`utils` is absent from a server's Playwright object); refused
  // all the same, in case a version exposes it: each takes a path of this machine.
  const LocalUtilsDispatcher = serverExport(
    playwrightDir,
    'dispatchers/localUtilsDispatcher.js',
    'LocalUtilsDispatcher',
  );
  for (const method of ['zip', 'harOpen', 'harUnzip', 'tracingStarted']) {
    refuse(LocalUtilsDispatcher, method, `LocalUtils.${method}`, "it takes a path of the browser's machine");
  }
  const AndroidDispatcher = serverExport(
    playwrightDir,
    'dispatchers/androidDispatcher.js',
    'AndroidDispatcher',
  );
  refuse(AndroidDispatcher, 'devices', 'Android devices', 'an agent has none');
  // Initializers the server sends with every new object: an artifact's (a download's, a trace's)
  // carries its server path, a context's the server folder its videos are recorded in.
  const DispatcherConnection = serverExport(
    playwrightDir,
    'dispatchers/dispatcher.js',
    'DispatcherConnection',
  );
  patch(
    DispatcherConnection,
    'sendCreate',
    (sendCreate) =>
      function (this: Any, ...args: Any[]) {
        const [parent, type, guid, initializer] = args;
        let sent = initializer;
        if (type === 'Artifact' && typeof initializer?.absolutePath === 'string') {
          sent = { ...initializer, absolutePath: '' };
        } else if (type === 'BrowserContext' && typeof initializer?.options?.recordVideo?.dir === 'string') {
          sent = {
            ...initializer,
            options: { ...initializer.options, recordVideo: { ...initializer.options.recordVideo, dir: '' } },
          };
        }
        return (sendCreate as (...a: Any[]) => unknown).call(this, parent, type, guid, sent);
      } as DispatcherMethod,
  );
}

/** One connection's own artifacts folder: created on first use, removed when the connection closes. */
type ConnectionFolder = { path: string; state: 'unused' | 'created' | 'removed' };

/**
 * Gives every connection to this browser its own folder for what Playwright's server writes on its
 * behalf (traces: `.trace`, `.network`, `resources/`; downloads; videos; HAR files; uploaded
 * files), in this host's temp dir, mode 0700, removed once the connection closed and its contexts
 * were closed. Playwright's server has one artifacts folder per launched browser, kept until the
 * browser closes: every check that ever used this browser would find there the traces of every
 * other, unscrubbed.
 *
 * How: each call a connection makes runs with its folder as its async context
 * (AsyncLocalStorage, around DispatcherConnection.dispatch), and the browser's `artifactsDir`,
 * `downloadsPath` and `tracesDir` options become getters that answer the calling connection's
 * folder. A download (announced by Chromium, outside any call) gets the folder of its page's
 * context. Read outside any connection's call, they answer a path under a plain file, where
 * nothing can be created: nothing is ever written to a folder shared by connections.
 *
 * @param root the folder the connections' folders are created in (this host's temp dir).
 * @throws Error when the runtime's playwright-core has not the classes and methods used (a version
 *   this host does not know): the host must not serve then.
 */
function artifactsPerConnection(playwrightDir: string, root: string): void {
  const { AsyncLocalStorage } = require('node:async_hooks') as typeof import('node:async_hooks');
  const calling = new AsyncLocalStorage<ConnectionFolder>();
  const folders = new WeakMap<object, ConnectionFolder>();
  const contextFolders = new WeakMap<object, ConnectionFolder>();
  const nowhere = path.join(root, 'no-shared-artifacts');
  fs.writeFileSync(nowhere, 'Playwright artifacts are kept per connection, never here.\n', { mode: 0o400 });
  const refusedPath = path.join(nowhere, 'refused');
  const folderPath = (folder: ConnectionFolder | undefined): string => {
    if (folder === undefined || folder.state === 'removed') return refusedPath;
    if (folder.state === 'unused') {
      fs.mkdirSync(folder.path, { mode: 0o700 });
      folder.state = 'created';
    }
    return folder.path;
  };
  const folderOf = (connection: object): ConnectionFolder => {
    let folder = folders.get(connection);
    if (folder === undefined) {
      folder = {
        path: path.join(root, `connection-${crypto.randomBytes(8).toString('hex')}`),
        state: 'unused',
      };
      folders.set(connection, folder);
    }
    return folder;
  };
  const DispatcherConnection = serverExport(
    playwrightDir,
    'dispatchers/dispatcher.js',
    'DispatcherConnection',
  );
  patch(
    DispatcherConnection,
    'dispatch',
    (dispatch) =>
      function (this: Any, message: Any) {
        return calling.run(folderOf(this), () => dispatch.call(this, message, undefined));
      },
  );
  const perConnection = Symbol('outpost.artifactsPerConnection');
  /** Turns the browser's artifacts options into getters of the calling connection's folder, once. */
  const install = (browser: Any): void => {
    const options = browser?.options;
    if (options === null || typeof options !== 'object') {
      throw new Error("the runtime's playwright-core browser has no options to keep artifacts apart");
    }
    if (options[perConnection]) return;
    for (const key of ['artifactsDir', 'downloadsPath', 'tracesDir']) {
      Object.defineProperty(options, key, {
        get: () => folderPath(calling.getStore()),
        set: () => {},
        enumerable: true,
        configurable: true,
      });
    }
    options[perConnection] = true;
  };
  const BrowserDispatcher = serverExport(
    playwrightDir,
    'dispatchers/browserDispatcher.js',
    'BrowserDispatcher',
  );
  patch(
    BrowserDispatcher,
    'newContext',
    (newContext) =>
      async function (params, progress) {
        install(this._object);
        return newContext.call(this, params, progress);
      },
  );
  const Browser = serverExport(playwrightDir, 'browser.js', 'Browser');
  patch(
    Browser,
    'newContext',
    (newContext) =>
      async function (progress, options) {
        const context = await newContext.call(this, progress, options);
        const folder = calling.getStore();
        if (folder !== undefined && context !== null && typeof context === 'object')
          contextFolders.set(context, folder);
        return context;
      } as DispatcherMethod,
  );
  patch(
    Browser,
    '_downloadCreated',
    (downloadCreated) =>
      function (this: Any, ...args: Any[]) {
        install(this);
        const folder = contextFolders.get(args[0]?.browserContext);
        // A context this host does not know: run outside any folder, so the download cannot be read.
        const created = () => (downloadCreated as (...a: Any[]) => unknown).apply(this, args);
        return folder === undefined ? calling.exit(created) : calling.run(folder, created);
      } as DispatcherMethod,
  );
  const PlaywrightDispatcher = serverExport(
    playwrightDir,
    'dispatchers/playwrightDispatcher.js',
    'PlaywrightDispatcher',
  );
  // A request context's traces go to the connection's folder, never to one the client names.
  patch(
    PlaywrightDispatcher,
    'newRequest',
    (newRequest) =>
      async function (params, progress) {
        return newRequest.call(this, { ...params, tracesDir: folderPath(calling.getStore()) }, progress);
      },
  );
  // Called once the connection closed, after its contexts were closed.
  patch(
    PlaywrightDispatcher,
    'cleanup',
    (cleanup) =>
      async function (this: Any) {
        try {
          await cleanup.call(this, undefined, undefined);
        } finally {
          const folder = folders.get(this.connection);
          if (folder !== undefined && folder.state !== 'removed') {
            const created = folder.state === 'created';
            folder.state = 'removed';
            if (created) await fs.promises.rm(folder.path, { recursive: true, force: true }).catch(() => {});
          }
        }
      },
  );
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
  // The host's temp dir is its own (its uid's, mode 0700): each connection's folder is made in it.
  artifactsPerConnection(playwrightDir, os.tmpdir());
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
