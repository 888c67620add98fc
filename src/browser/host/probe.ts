/** The browser host's own client of its server: health probes and the compatibility check. */
import type * as PlaywrightCore from '../../../runtimes/2026.04/node_modules/playwright-core/index.js';

/** `promise`, or a rejection after `timeoutMs` saying `what` took longer. */
function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${timeoutMs} ms`)), timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Probes through the server, the way runners' connections go. */
export type Probe = {
  /** The probe's connection, made (again) when it is not connected; rejects when connecting fails. */
  connect(timeoutMs: number): Promise<PlaywrightCore.Browser>;
  /** Opens and closes a browser context through the server within `timeoutMs` ms: Chromium and the server both answer. */
  healthProbe(timeoutMs: number): Promise<void>;
  /**
   * The runtime's compatibility check within `timeoutMs` ms: a page through the server, with
   * `data:` content, a script evaluated in it and a screenshot taken, as a browser check would.
   * Resolves with the screenshot's size, bytes; rejects saying what failed.
   */
  selfTest(timeoutMs: number): Promise<number>;
  /** Closes the probe's connection, if any; never rejects. */
  close(): Promise<void>;
};

/**
 * The host's probe of its own server at `wsEndpoint`.
 *
 * @param playwright the runtime's playwright-core.
 */
export function createProbe(playwright: typeof PlaywrightCore, wsEndpoint: string): Probe {
  let probe: PlaywrightCore.Browser | null = null;
  const connect = async (timeoutMs: number): Promise<PlaywrightCore.Browser> => {
    if (probe?.isConnected()) return probe;
    probe = await playwright.chromium.connect(wsEndpoint, { timeout: timeoutMs });
    return probe;
  };
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
  const close = async (): Promise<void> => {
    await probe?.close().catch(() => {});
  };
  return { connect, healthProbe, selfTest, close };
}
