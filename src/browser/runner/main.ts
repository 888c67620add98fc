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
import { runToolSession } from './tools.js';
import type { ToolCall, ToolSessionInit } from '../tool-messages.js';

/** Most bytes read from stdin (a prepare line and the payload: script, files, variables). */
const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

/** How a tool session's first line starts (tool-messages.ts); a payload starts `{"wsEndpoint"`. */
const TOOLS_PREFIX = Buffer.from('{"t":"tools"');
/** Longest line of a tool session, bytes. */
const MAX_TOOL_LINE_BYTES = 4 * 1024 * 1024;

/**
 * The lines of a tool session as they arrive on stdin: the first is its ToolSessionInit, each next a
 * ToolCall. A line that is not JSON, or longer than 4 MiB, ends the process with an `error`.
 */
class ToolLines {
  #buffer = '';
  #lines: string[] = [];
  #ended = false;
  #wake: (() => void) | null = null;

  push(chunk: Buffer): void {
    this.#buffer += chunk.toString('utf8');
    let at = this.#buffer.indexOf('\n');
    while (at !== -1) {
      const line = this.#buffer.slice(0, at).trim();
      this.#buffer = this.#buffer.slice(at + 1);
      if (line !== '') this.#lines.push(line);
      at = this.#buffer.indexOf('\n');
    }
    if (this.#buffer.length > MAX_TOOL_LINE_BYTES)
      finishWith({ t: 'error', message: 'a tool session line is longer than 4 MiB' });
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  /** The next line parsed, or null at the end of input. */
  async next(): Promise<unknown> {
    while (this.#lines.length === 0) {
      if (this.#ended) return null;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = null;
    }
    const line = this.#lines.shift() as string;
    try {
      return JSON.parse(line);
    } catch {
      finishWith({ t: 'error', message: 'a tool session line is not JSON' });
      return null;
    }
  }

  /** The calls after the init line, until the end of input. */
  async *calls(): AsyncGenerator<ToolCall> {
    for (let line = await this.next(); line !== null; line = await this.next()) {
      const call = line as ToolCall;
      if (call.t === 'call' && typeof call.id === 'number' && typeof call.tool === 'string') yield call;
    }
  }
}

/** Runs a tool session on the lines of stdin, then exits. */
async function toolSession(
  lines: ToolLines,
  loaded: Loaded,
  prepared: Promise<Prepared | null> | null,
): Promise<void> {
  const init = (await lines.next()) as ToolSessionInit | null;
  if (init === null || typeof init.wsEndpoint !== 'string' || typeof init.env !== 'object') {
    finishWith({ t: 'error', message: 'bad tool session' });
    return;
  }
  await runToolSession(init, loaded, prepared, lines.calls());
  channel.finished = true;
  realExit(0);
}

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
  /** Set when the input after the prepare line is a tool session rather than a payload. */
  let tools: ToolLines | null = null;
  /** Whether the input after the prepare line was seen far enough to tell a tool session from a payload. */
  let decided = false;
  process.stdin.on('data', (chunk: Buffer) => {
    if (tools !== null) {
      tools.push(chunk);
      return;
    }
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes > MAX_PAYLOAD_BYTES) {
      finishWith({ t: 'error', message: `the payload is larger than ${MAX_PAYLOAD_BYTES} bytes` });
      return;
    }
    if (firstLineSeen) {
      decideTools();
      return;
    }
    // Only the new chunk is searched; a prepare line is short, so a first line past 4 KiB is the payload's.
    const at = chunk.indexOf(10);
    if (at === -1) {
      if (bytes > 4_096) {
        firstLineSeen = true;
        decideTools();
      }
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
    decideTools();
  });
  /** After the prepare line: a tool session starts `{"t":"tools"`, anything else is the payload. */
  function decideTools(): void {
    if (decided || bytes - payloadStart < TOOLS_PREFIX.length) return;
    decided = true;
    const rest = Buffer.concat(chunks).subarray(payloadStart);
    if (!rest.subarray(0, TOOLS_PREFIX.length).equals(TOOLS_PREFIX)) return;
    tools = new ToolLines();
    tools.push(rest);
    chunks.length = 0;
    toolSession(tools, loaded, prepared).catch((err) =>
      finishWith({ t: 'error', message: errorMessage(err) }),
    );
  }
  process.stdin.on('error', () => {});
  process.stdin.on('end', () => {
    if (tools !== null) {
      tools.end();
      return;
    }
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
