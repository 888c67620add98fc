/**
 * What a check may do through a page's CDP session and where it may navigate: the policy of the
 * browser host's server (keepConnectionsApart in connections-apart.ts enforces it).
 */

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
export const CDP_ALLOWED_DOMAINS: ReadonlySet<string> = new Set([
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
export function urlRefusal(url: string): string | null {
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
export function cdpRefusal(method: string, params: unknown): string | null {
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
