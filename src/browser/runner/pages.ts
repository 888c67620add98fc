/** Pages of a run: their web vitals, and the page, console and request errors they raise. */
import type { WebVitals } from '../messages.js';
import { addError, errorMessage } from './errors.js';
import {
  type Any,
  cut,
  MAX_DETAIL_CHARS,
  MAX_MESSAGE_CHARS,
  MAX_URL_CHARS,
  pages,
  runState,
} from './state.js';

const EMPTY_VITALS = (): WebVitals => ({ FCP: null, LCP: null, CLS: null, TBT: null, INP: null, TTFB: null });
type PageRecord = { url: string; webVitals: WebVitals; seen: boolean };

/** The document each open page shows now, with the vitals it reported so far. */
export const currentVisit = new Map<Any, PageRecord>();
/** Every page the run opened, in order (closed ones too). */
export const openPages: Any[] = [];

/** Ends the current visit of `page`: kept as a BrowserPage unless it was about:blank. */
export function flushPage(page: Any): void {
  const record = currentVisit.get(page);
  currentVisit.delete(page);
  if (record === undefined || record.url === '' || record.url === 'about:blank') return;
  if (pages.length < runState.maxEntries)
    pages.push({ url: cut(record.url, MAX_URL_CHARS), webVitals: record.webVitals });
}

/** Collects FCP, LCP, CLS, INP, TTFB (web-vitals, every change) and TBT (long tasks) of each main-frame document. */
export function vitalsScript(webVitalsSource: string): string {
  return `(() => {
if (window !== window.top || typeof window.__outpostVital !== 'function') return;
const report = (name, value) => { try { window.__outpostVital(location.href, name, value); } catch {} };
${webVitalsSource}
const wv = typeof webVitals !== 'undefined' ? webVitals : window.webVitals;
if (wv) for (const name of ['FCP', 'LCP', 'CLS', 'INP', 'TTFB'])
  wv['on' + name]((metric) => report(name, metric.value), { reportAllChanges: true });
let tbt = 0;
try {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) tbt += Math.max(0, entry.duration - 50);
    report('TBT', tbt);
  }).observe({ type: 'longtask', buffered: true });
} catch {}
addEventListener('load', () => setTimeout(() => report('TBT', tbt), 0));
})();`;
}

/** The `__outpostVital` binding: one value of `name` reported by the page's document at `href`. */
export function recordVital(source: Any, href: unknown, name: unknown, value: unknown): void {
  const record = currentVisit.get(source.page);
  if (!record || typeof name !== 'string' || typeof value !== 'number' || !Number.isFinite(value)) return;
  if (typeof href !== 'string') return;
  if (withoutHash(record.url) !== withoutHash(href)) {
    // A late value of the document before: it belongs to a visit already flushed.
    if (record.seen || (record.url !== '' && record.url !== 'about:blank')) return;
    record.url = href;
  }
  if (name in record.webVitals) (record.webVitals as Record<string, number | null>)[name] = value;
  record.seen = true;
}

function withoutHash(href: string): string {
  const at = href.indexOf('#');
  return at === -1 ? href : href.slice(0, at);
}

function safeUrl(page: Any): string | null {
  try {
    return cut(String(page.url()), MAX_URL_CHARS);
  } catch {
    return null;
  }
}

/** Follows a page of the run: its visits (vitals), page errors, console errors, failed requests and navigations. */
export function trackPage(page: Any): void {
  openPages.push(page);
  currentVisit.set(page, { url: page.url(), webVitals: EMPTY_VITALS(), seen: false });
  page.on('framenavigated', (frame: Any) => {
    if (frame !== page.mainFrame()) return;
    flushPage(page);
    currentVisit.set(page, { url: frame.url(), webVitals: EMPTY_VITALS(), seen: false });
  });
  page.on('close', () => flushPage(page));
  page.on('pageerror', (error: Any) =>
    addError({
      kind: 'PAGE',
      message: errorMessage(error),
      detail: error?.stack ? cut(String(error.stack), MAX_DETAIL_CHARS) : null,
      location: null,
      url: safeUrl(page),
    }),
  );
  page.on('console', (message: Any) => {
    if (message.type() !== 'error') return;
    addError({
      kind: 'CONSOLE',
      message: cut(message.text(), MAX_MESSAGE_CHARS),
      detail: null,
      location: null,
      url: safeUrl(page),
    });
  });
  page.on('requestfailed', (request: Any) =>
    addError({
      kind: 'REQUEST',
      message: cut(
        `${request.method()} ${request.url()} failed: ${request.failure()?.errorText ?? 'no answer'}`,
        MAX_MESSAGE_CHARS,
      ),
      detail: null,
      location: null,
      url: safeUrl(page),
    }),
  );
  page.on('response', (response: Any) => {
    const request = response.request();
    if (response.status() < 400 || !request.isNavigationRequest() || request.frame() !== page.mainFrame())
      return;
    addError({
      kind: 'REQUEST',
      message: cut(`${request.method()} ${response.url()} answered ${response.status()}`, MAX_MESSAGE_CHARS),
      detail: null,
      location: null,
      url: cut(response.url(), MAX_URL_CHARS),
    });
  });
}
