/**
 * Keeps each connection to the browser host's server to its own contexts and away from the host's
 * files, by replacing server methods (patching.ts) with ones that refuse or check their arguments.
 */
import path from 'node:path';
import { cdpRefusal, urlRefusal } from './cdp-policy.js';
import { type Any, type DispatcherMethod, patch, refusal, refuse, serverExport } from './patching.js';

/** Browser-wide CDP sessions, contexts kept for reuse and browser tracing are refused; page CDP sessions follow cdp-policy.ts. */
function refuseBrowserWide(playwrightDir: string): void {
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
}

/** Calls that take or reveal paths of the server's machine: artifacts' paths, local files, temp file names, the recorder; `goto` by URL scheme. */
function guardServerPaths(playwrightDir: string): void {
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
}

/** Trace chunks as file entries, page agents, LocalUtils and Android devices are refused. */
function refuseLocalFacilities(playwrightDir: string): void {
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
}

/** The server paths in the initializers of new objects (an artifact's path, a context's video folder) are sent empty. */
function hideServerPaths(playwrightDir: string): void {
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
export function keepConnectionsApart(playwrightDir: string): void {
  refuseBrowserWide(playwrightDir);
  guardServerPaths(playwrightDir);
  refuseLocalFacilities(playwrightDir);
  hideServerPaths(playwrightDir);
}
