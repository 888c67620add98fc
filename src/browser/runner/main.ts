/**
 * The bootstrap of one browser runner process (docs/architecture.md, "Browser checks"), bundled to
 * `runner-child.cjs` (src/common/compiled-child.ts).
 *
 * BrowserRunner starts it as `node --permission … runner-child.cjs <runtimeDir> <runtimeId>` with
 * its private temp dir as working directory. Warm, it loads the runtime's `playwright-core` and
 * `@playwright/test`, reads `web-vitals`, says `ready` on fd 3 and blocks reading one
 * RunnerPayload from stdin. Then it connects to the warm browser, makes a fresh traced context,
 * runs the check's script (TEST or PLAIN shape), reports on fd 3 (messages.ts) and exits. One
 * process runs one check.
 *
 * Scripts are JavaScript on Node 20; where Node has `module.stripTypeScriptTypes` (22.13 and
 * later) TypeScript types are stripped first.
 *
 * Its bundle must stay self-contained: the permission model lets the process read only that
 * file, the runtime's node_modules and its temp dir. Only `node:` built-ins are imported; the
 * runtime's Playwright is loaded at run time (context.ts).
 */
import { now, realExit } from '../../common/child/channel.js';
import { requirePermissionModel } from '../../common/child/lockdown.js';
import type { RunnerPayload } from '../messages.js';
import { finishWith, fitReport } from './capture.js';
import { type Loaded, load, type Prepared, prepare } from './context.js';
import { addError, describeError, errorMessage } from './errors.js';
import { emitLog } from './output.js';
import { run } from './run.js';
import { channel, runState, runtimeId } from './state.js';

/** Most bytes read from stdin (a prepare line and the payload: script, files, variables). */
const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

/** The script called process.exit: what ran so far is reported (no trace: exit is synchronous). */
function onExit(code: number): void {
  if (channel.finished) return;
  if (runState.reportNow !== null) {
    addError({
      kind: 'SCRIPT',
      message: `the script called process.exit(${code})`,
      detail: null,
      location: null,
      url: null,
    });
    const durationMs = runState.scriptStart === 0 ? 0 : now() - runState.scriptStart;
    channel.finished = true;
    channel.send({ t: 'done', report: fitReport(runState.reportNow(durationMs)) });
  }
}

/**
 * Reads stdin: an optional first line `{"t":"prepare","wsEndpoint":…}` (the pool names the warm
 * browser early: connect and prepare the context while waiting), then the payload, then end of
 * file; runs the payload. More than 64 MiB, or no payload, ends the process.
 */
function readStdin(loaded: Loaded): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let firstLineSeen = false;
  /** Where the payload starts: after the prepare line when there is one. */
  let payloadStart = 0;
  /** Set when the agent named the warm browser before the payload. */
  let prepared: Promise<Prepared | null> | null = null;
  process.stdin.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes > MAX_PAYLOAD_BYTES) {
      finishWith({ t: 'error', message: `the payload is larger than ${MAX_PAYLOAD_BYTES} bytes` });
      return;
    }
    if (firstLineSeen) return;
    // Only the new chunk is searched; a prepare line is short, so a first line past 4 KiB is the payload's.
    const at = chunk.indexOf(10);
    if (at === -1) {
      if (bytes > 4_096) firstLineSeen = true;
      return;
    }
    firstLineSeen = true;
    const lineEnd = bytes - chunk.length + at;
    try {
      const line = JSON.parse(Buffer.concat(chunks).subarray(0, lineEnd).toString('utf8')) as {
        t?: unknown;
        wsEndpoint?: unknown;
      };
      if (line.t === 'prepare' && typeof line.wsEndpoint === 'string') {
        payloadStart = lineEnd + 1;
        prepared = prepare(line.wsEndpoint, loaded);
      }
    } catch {
      // Not a prepare line: the payload itself, read whole at the end.
    }
  });
  process.stdin.on('error', () => {});
  process.stdin.on('end', () => {
    const arrivedAt = now();
    const input = Buffer.concat(chunks).subarray(payloadStart).toString('utf8').trim();
    if (input === '') {
      // The agent closed (or died) before sending a payload: nothing to run.
      channel.finished = true;
      realExit(0);
    }
    let payload: RunnerPayload;
    try {
      payload = JSON.parse(input) as RunnerPayload;
      if (typeof payload.wsEndpoint !== 'string' || typeof payload.code !== 'string')
        throw new Error('not a payload');
    } catch (err) {
      finishWith({ t: 'error', message: `bad payload: ${errorMessage(err)}` });
      return;
    }
    run(payload, loaded, arrivedAt, prepared).catch((err) =>
      finishWith({ t: 'error', message: errorMessage(err) }),
    );
  });
}

function main(): void {
  // Never run a script without the permission model (a wrong flag for this Node version).
  requirePermissionModel('runner process', realExit);
  Error.stackTraceLimit = 30;
  let loaded: Loaded;
  try {
    loaded = load();
  } catch (err) {
    channel.send({ t: 'error', message: `runtime ${runtimeId} cannot be loaded: ${errorMessage(err)}` });
    realExit(0);
    return;
  }
  process.on('exit', onExit);
  process.on('uncaughtException', (err) => {
    if (channel.finished) return;
    addError(describeError(err));
  });
  process.on('unhandledRejection', (err) => {
    if (channel.finished) return;
    emitLog('ERROR', `unhandled rejection: ${errorMessage(err)}`);
  });
  channel.send({ t: 'ready', playwright: loaded.version });
  readStdin(loaded);
}

main();
