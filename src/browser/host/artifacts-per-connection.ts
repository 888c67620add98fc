/** A folder of its own for what the browser host's server writes on behalf of each connection. */
import asyncHooks from 'node:async_hooks';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Any, type DispatcherMethod, patch, serverExport } from './patching.js';

/** One connection's own artifacts folder: created on first use, removed when the connection closes. */
type ConnectionFolder = { path: string; state: 'unused' | 'created' | 'removed' };

/** The connections' folders and the folder of the call running now. */
type Folders = {
  /** The folder of the connection whose call runs in this async context. */
  calling: asyncHooks.AsyncLocalStorage<ConnectionFolder>;
  /** Each connection's folder (made on first use). */
  folderOf(connection: object): ConnectionFolder;
  /** Each connection's folder, when it has one. */
  folders: WeakMap<object, ConnectionFolder>;
  /** The folder of each browser context, as made by a connection's call. */
  contextFolders: WeakMap<object, ConnectionFolder>;
  /** The path of a folder, created on first use; outside any call or once removed, a path nothing can be made at. */
  folderPath(folder: ConnectionFolder | undefined): string;
};

function connectionFolders(root: string): Folders {
  const nowhere = path.join(root, 'no-shared-artifacts');
  fs.writeFileSync(nowhere, 'Playwright artifacts are kept per connection, never here.\n', { mode: 0o400 });
  const refusedPath = path.join(nowhere, 'refused');
  const folders = new WeakMap<object, ConnectionFolder>();
  return {
    calling: new asyncHooks.AsyncLocalStorage<ConnectionFolder>(),
    folders,
    contextFolders: new WeakMap<object, ConnectionFolder>(),
    folderPath: (folder) => {
      if (folder === undefined || folder.state === 'removed') return refusedPath;
      if (folder.state === 'unused') {
        fs.mkdirSync(folder.path, { mode: 0o700 });
        folder.state = 'created';
      }
      return folder.path;
    },
    folderOf: (connection) => {
      let folder = folders.get(connection);
      if (folder === undefined) {
        folder = {
          path: path.join(root, `connection-${crypto.randomBytes(8).toString('hex')}`),
          state: 'unused',
        };
        folders.set(connection, folder);
      }
      return folder;
    },
  };
}

/**
 * Each call runs in its connection's folder; the browser's artifacts options answer that folder;
 * a context remembers the folder it was made in, and a download runs in its context's folder.
 */
function patchBrowser(playwrightDir: string, f: Folders): void {
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
        return f.calling.run(f.folderOf(this), () => dispatch.call(this, message, undefined));
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
        get: () => f.folderPath(f.calling.getStore()),
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
        const folder = f.calling.getStore();
        if (folder !== undefined && context !== null && typeof context === 'object')
          f.contextFolders.set(context, folder);
        return context;
      } as DispatcherMethod,
  );
  patch(
    Browser,
    '_downloadCreated',
    (downloadCreated) =>
      function (this: Any, ...args: Any[]) {
        install(this);
        const folder = f.contextFolders.get(args[0]?.browserContext);
        // A context this host does not know: run outside any folder, so the download cannot be read.
        const created = () => (downloadCreated as (...a: Any[]) => unknown).apply(this, args);
        return folder === undefined ? f.calling.exit(created) : f.calling.run(folder, created);
      } as DispatcherMethod,
  );
}

/** A request context's traces go to the connection's folder; a connection's folder is removed after its cleanup. */
function patchConnections(playwrightDir: string, f: Folders): void {
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
        return newRequest.call(this, { ...params, tracesDir: f.folderPath(f.calling.getStore()) }, progress);
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
          const folder = f.folders.get(this.connection);
          if (folder !== undefined && folder.state !== 'removed') {
            const created = folder.state === 'created';
            folder.state = 'removed';
            if (created) await fs.promises.rm(folder.path, { recursive: true, force: true }).catch(() => {});
          }
        }
      },
  );
}

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
 * @param playwrightDir the runtime's playwright-core folder.
 * @param root the folder the connections' folders are created in (this host's temp dir).
 * @throws Error when the runtime's playwright-core has not the classes and methods used (a version
 *   this host does not know): the host must not serve then.
 */
export function artifactsPerConnection(playwrightDir: string, root: string): void {
  const folders = connectionFolders(root);
  patchBrowser(playwrightDir, folders);
  patchConnections(playwrightDir, folders);
}
