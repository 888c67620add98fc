/** The end of a run: the failure screenshot, the trace, videos, and the one last message. */
import path from 'node:path';
import { now, realExit, stringify } from '../../common/child/channel.js';
import type { BrowserRunReport, RunnerMessage } from '../messages.js';
import { announce } from './artifacts.js';
import { masksFor } from './masking.js';
import { secrets } from './output.js';
import { openPages } from './pages.js';
import { type Any, channel, MAX_DONE_BYTES, within, workDir } from './state.js';

/** How long the failure screenshot and the deadline screenshot may take, ms. */
const SCREENSHOT_TIMEOUT_MS = 2_000;
/** How long stopping the trace may take, ms. */
const TRACE_TIMEOUT_MS = 3_000;
/** How long closing the context (and saving videos) may take, ms. */
const CLOSE_TIMEOUT_MS = 2_000;

/**
 * The failure (or deadline) screenshot, the trace, the context closed, videos saved. Each step
 * is bounded by its own cap and by what is left until `endAt` (the payload's `timeoutMs` from its
 * arrival, after which the agent may kill the runner), keeping time for the steps after it; a
 * file is announced only when it was written whole.
 *
 * @param endAt `performance.now()` ms.
 */
export async function capture(context: Any, failed: boolean, endAt: number): Promise<void> {
  const budget = (capMs: number, keepMs: number) => Math.max(0, Math.min(capMs, endAt - now() - keepMs));
  const whole = async (work: Promise<unknown>, ms: number): Promise<boolean> =>
    (await within(
      work.then(() => true),
      ms,
    )) === true;
  if (failed) {
    const page = [...openPages].reverse().find((p: Any) => !p.isClosed());
    const ms = budget(SCREENSHOT_TIMEOUT_MS, 1_500);
    if (page && ms > 0) {
      const shot = page.screenshot({
        path: path.join(workDir, 'failure.png'),
        fullPage: true,
        timeout: ms,
        mask: masksFor(page),
        animations: 'disabled',
      });
      if (await whole(shot, ms + 250)) announce('failure.png', 'SCREENSHOT');
    }
  } else {
    // Let vitals reported by pages arrive: a round trip to each open page (bounded).
    const open = openPages.filter((p: Any) => !p.isClosed());
    await within(Promise.all(open.map((p: Any) => p.evaluate(() => 0))), budget(500, 1_500));
  }
  const traced = context.tracing.stop({ path: path.join(workDir, 'trace.zip') });
  if (await whole(traced, budget(TRACE_TIMEOUT_MS, 300))) announce('trace.zip', 'TRACE');
  const videos = openPages.map((page: Any) => {
    try {
      return page.video();
    } catch {
      return null;
    }
  });
  await within(context.close(), budget(CLOSE_TIMEOUT_MS, 100));
  for (const [index, video] of videos.entries()) {
    if (!video) continue;
    const name = `video-${index + 1}.webm`;
    if (await whole(video.saveAs(path.join(workDir, name)), budget(CLOSE_TIMEOUT_MS, 100)))
      announce(name, 'VIDEO');
  }
}

/**
 * The report within MAX_DONE_BYTES: first without error details, then with at most 100
 * entries in each list (the steps were sent one by one already).
 */
export function fitReport(report: BrowserRunReport): BrowserRunReport {
  const size = (r: BrowserRunReport) => Buffer.byteLength(stringify({ t: 'done', report: r }));
  if (size(report) <= MAX_DONE_BYTES) return report;
  const lean = { ...report, errors: report.errors.map((e) => ({ ...e, detail: null })) };
  if (size(lean) <= MAX_DONE_BYTES) return lean;
  const cutList = <T>(list: T[]) => list.slice(0, 100);
  return {
    ...lean,
    errors: cutList(lean.errors),
    droppedErrors: lean.droppedErrors + Math.max(0, lean.errors.length - 100),
    steps: cutList(lean.steps),
    pages: cutList(lean.pages),
  };
}

/** Reports the secrets left in the environment, sends the last message and ends the process; later calls do nothing. */
export function finishWith(message: RunnerMessage): void {
  if (channel.finished) return;
  secrets.sweep(process.env);
  channel.send(message.t === 'done' ? { t: 'done', report: fitReport(message.report) } : message);
  channel.finished = true;
  realExit(0);
}
