import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { abortedError, raceAbort, sleep } from '../../common/abort.js';
import { OutpostError } from '../../common/errors.js';
import { type LinkedSignal, linkSignal } from '../../common/linked-signal.js';
import { captureFilter, connectionFilter, type Endpoint } from './filter.js';
import { PcapStreamSplitter } from './format.js';
import { Marker } from './marker.js';

/** Options of {@link capturePackets}. */
export type CaptureOptions = {
  /** Numeric IPv4 or IPv6 address whose traffic is captured (an IPv6 `%scope` is ignored). */
  host: string;
  /** Only this TCP/UDP port of `host`, 1–65535. Default: every port. */
  port?: number;
  /**
   * The local end of the one TCP connection to capture (with `port`): only that connection's
   * packets (both directions) and the ICMP errors quoting them are kept ({@link connectionFilter}),
   * so another connection to `host:port` (of this process or any other) is never recorded.
   * Bind the connection to it before `during` connects. Default: every connection to `host:port`.
   */
  local?: Endpoint;
  /** Interface to capture on (`tcpdump -i`). Default `any`: every interface, Linux cooked headers. */
  interface?: string;
  /** Bytes kept per packet (`tcpdump -s`), 68–262144. Default 262144 (tcpdump's): whole packets, even loopback's 64 KB ones. */
  snaplenBytes?: number;
  /**
   * Largest file, bytes, 1024–104857600 (100 MiB, well under the 150 MB artifact limit).
   * Default 10485760 (10 MiB). The capture stops between two packets before passing it.
   */
  maxBytes?: number;
  /** Time to go on capturing after `during` settles, for late answers and resets, ms, 0–10000. Default 200. */
  drainMs?: number;
  /** How long tcpdump may take to start listening, ms, 1–60000. Default 5000. */
  startTimeoutMs?: number;
  /** How long tcpdump may take to exit after SIGTERM before SIGKILL, ms, 1–60000. Default 2000. */
  stopTimeoutMs?: number;
  /**
   * Path of the pcap file to create (it must not exist yet: it is created exclusively, mode
   * 0600). Default: a new `outpost-capture-<random>.pcap` in the OS temporary directory.
   */
  file?: string;
  /** The tcpdump to run. Default `tcpdump`, looked up in PATH. */
  tcpdumpPath?: string;
  /** Aborts the capture: tcpdump is killed, the file removed, and the promise rejects with OUTPOST_ERR_ABORTED. */
  signal?: AbortSignal;
  /**
   * What to capture: called once tcpdump listens, typically repeating the failed connection.
   * It should resolve when done, also when its connections fail: a rejection ends the capture
   * (file removed) and is passed on. Its signal aborts when the capture reaches `maxBytes` or
   * `signal` aborts.
   */
  during: (signal: AbortSignal) => Promise<void>;
};

/** A finished capture. */
export type PacketCapture = {
  /** The pcap file (classic libpcap format, microsecond timestamps, mode 0600); the caller removes it. */
  file: string;
  sizeBytes: number;
  /** Packets in the file. */
  packets: number;
  /** From starting tcpdump to its exit, ms (performance.now()). */
  durationMs: number;
  /** The capture stopped at `maxBytes`; later packets are not in the file. */
  truncated: boolean;
  /** LINKTYPE_* of the file: 276 (Linux cooked v2) for `any`, 1 (Ethernet) for most interfaces. */
  linkType: number;
  /** The BPF filter tcpdump ran with. */
  filter: string;
  interface: string;
};

const LISTENING = /listening on /;
const PERMISSION = /permission|not permitted/i;
/** Keeps at most this much of tcpdump's stderr for error messages. */
const STDERR_KEEP_BYTES = 4096;
const INTERFACE_NAME = /^[A-Za-z0-9_.:@-]{1,15}$/;
const GRANT =
  'run the agent as root or grant CAP_NET_RAW (docker run --cap-add NET_RAW; Kubernetes ' +
  'securityContext.capabilities.add: [NET_RAW]; for a non-root user also `setcap cap_net_raw+eip` on tcpdump)';

/** tcpdump processes alive: killed when this process exits, so none outlives the agent. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function checkInteger(name: string, value: number, min: number, max: number): number {
  if (!(Number.isInteger(value) && value >= min && value <= max)) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}; got ${String(value)}`);
  }
  return value;
}

/** The message of the OUTPOST_ERR_ABORTED error a capture rejects with when its signal aborts. */
const CAPTURE_ABORTED = 'packet capture aborted';

function unavailable(message: string, cause?: unknown): OutpostError {
  return new OutpostError(
    'OUTPOST_ERR_CAPTURE_UNAVAILABLE',
    message,
    cause === undefined ? undefined : { cause },
  );
}

/** One tcpdump process writing a pcap stream to its stdout. */
class Tcpdump {
  readonly child: ChildProcess;
  /** Resolves once tcpdump listens; rejects with OUTPOST_ERR_CAPTURE_UNAVAILABLE when it cannot. */
  readonly ready: Promise<void>;
  /** Resolves when the process has exited and its pipes are closed. */
  readonly closed: Promise<void>;
  #stderr = '';
  #exited = false;

  constructor(path: string, args: string[], startTimeoutMs: number) {
    this.child = spawn(path, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(this.child);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', () => {
        for (const child of live) child.kill('SIGKILL');
      });
    }
    this.closed = new Promise((resolve) => {
      this.child.once('close', () => {
        this.#exited = true;
        live.delete(this.child);
        resolve();
      });
    });
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(unavailable(`tcpdump did not start listening within ${startTimeoutMs} ms: ${this.stderr}`));
        this.kill();
      }, startTimeoutMs);
      timer.unref();
      this.child.stderr!.setEncoding('utf8');
      this.child.stderr!.on('data', (text: string) => {
        if (this.#stderr.length < STDERR_KEEP_BYTES) this.#stderr += text;
        if (LISTENING.test(this.#stderr)) {
          clearTimeout(timer);
          resolve();
        }
      });
      this.child.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        this.#exited = true;
        live.delete(this.child);
        const message =
          err.code === 'ENOENT'
            ? `tcpdump is not installed (${path} not found): install it (apt-get install tcpdump)`
            : `tcpdump cannot be started (${path}): ${err.message}`;
        reject(unavailable(message, err));
      });
      // `close`, not `exit`: by then everything tcpdump wrote to stderr has been read.
      this.child.once('close', (code, signal) => {
        clearTimeout(timer);
        const said = this.stderr;
        if (PERMISSION.test(said)) {
          reject(unavailable(`tcpdump may not capture: ${said}; ${GRANT}`));
        } else {
          reject(unavailable(`tcpdump exited (${code ?? signal}) before listening: ${said}`));
        }
      });
    });
    // Rejections are handled by whoever awaits `ready`; none may go unhandled meanwhile.
    this.ready.catch(() => {});
  }

  /** What tcpdump wrote to stderr, on one line. */
  get stderr(): string {
    return this.#stderr.trim().replace(/\s*\n\s*/g, '; ') || '(nothing on stderr)';
  }

  /** SIGTERM (tcpdump flushes and exits), then SIGKILL after `timeoutMs`. Resolves once it is gone. */
  async stop(timeoutMs: number): Promise<void> {
    if (this.#exited) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.kill(), timeoutMs);
    timer.unref();
    await this.closed;
    clearTimeout(timer);
  }

  kill(): void {
    if (!this.#exited) this.child.kill('SIGKILL');
  }
}

/**
 * Captures the packets exchanged with `host` (and `port`) while `during` runs, with
 * `tcpdump -i <interface> -p -n -U --immediate-mode -s <snaplen> -B <ring> -w - <filter>`. tcpdump
 * writes to a pipe, not to the file: we write whole records only, so the file stays valid
 * when `maxBytes` stops it early, and neither tcpdump's privilege drop nor an AppArmor profile
 * can keep it from writing. `during` starts once tcpdump prints "listening on" (its socket and
 * filter are in place); after it, the capture goes on for `drainMs`, then tcpdump gets SIGTERM
 * (SIGKILL after `stopTimeoutMs`).
 *
 * The file holds packet bytes as captured: scrub it (scrubPcap) before it leaves the agent.
 * @throws RangeError for a bad option (naming it); OutpostError OUTPOST_ERR_CAPTURE_UNAVAILABLE
 *   when tcpdump is missing, may not capture (it needs root or CAP_NET_RAW), or does not start;
 *   OUTPOST_ERR_ABORTED when `signal` aborts; whatever `during` rejects with.
 */
export async function capturePackets(options: CaptureOptions): Promise<PacketCapture> {
  const settings = captureSettings(options);
  const signal = options.signal;
  if (signal?.aborted) throw abortedError(signal, CAPTURE_ABORTED);
  // On loopback-capturing interfaces a marker datagram ends the capture (see Marker).
  const device = settings.device;
  const marker = device === 'any' || device === 'lo' ? await Marker.open() : null;
  const filter = marker === null ? settings.baseFilter : `(${settings.baseFilter}) or (${marker.filter})`;

  const file = options.file ?? join(tmpdir(), `outpost-capture-${randomBytes(8).toString('hex')}.pcap`);
  // Exclusive create: never follows a link someone planted in a shared temporary directory.
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    marker?.close();
    throw err;
  }
  const started = performance.now();
  const tcpdump = new Tcpdump(
    options.tcpdumpPath ?? 'tcpdump',
    [
      ...['-i', device, '-p', '-n', '-U', '--immediate-mode'],
      ...['-s', String(settings.snaplen), '-B', String(ringKiB(settings.snaplen)), '-w', '-', filter],
    ],
    settings.startTimeoutMs,
  );
  const duringSignal = linkSignal(signal ? [signal] : []);
  const writer = new CaptureWriter(fd, file, { settings, marker, tcpdump, duringSignal });
  tcpdump.child.stdout!.on('data', (chunk: Buffer) => writer.write(chunk));

  try {
    await captureDuring(options.during, signal, { settings, marker, tcpdump, duringSignal }, writer);
  } catch (err) {
    tcpdump.kill();
    writer.discard();
    throw err;
  } finally {
    duringSignal.dispose();
    marker?.close();
  }
  writer.close();
  const durationMs = performance.now() - started;
  const header = writer.splitter.header;
  const { streamError } = writer;
  if (streamError !== null || header === null) {
    rmSync(file, { force: true });
    throw unavailable(
      streamError !== null
        ? `tcpdump wrote no valid pcap stream: ${(streamError as Error).message}`
        : `tcpdump wrote no pcap header before it exited: ${tcpdump.stderr}`,
      streamError ?? undefined,
    );
  }
  const { sizeBytes, packets, truncated } = writer;
  return {
    file,
    sizeBytes,
    packets,
    durationMs,
    truncated,
    linkType: header.linkType,
    filter,
    interface: device,
  };
}

/** Packets the capture ring holds at least, whatever the snaplen (see {@link ringKiB}). */
const RING_PACKETS = 64;

/**
 * The size of tcpdump's capture ring (`-B`), KiB: room for {@link RING_PACKETS} packets of
 * `snaplen` bytes, at least libpcap's default 2 MiB, at most 32 MiB. In immediate mode libpcap's
 * TPACKET_V3 ring gives every packet a block of its own, one snaplen long: with the default 2 MiB
 * and whole 256 KB packets it held 7, and a capture of three loopback connections lost all but
 * the first 4 packets (and the end marker) on Linux 6.18 in 13 of 20 runs; with 16 MiB, none.
 */
function ringKiB(snaplen: number): number {
  return Math.min(32 * 1024, Math.max(2048, Math.ceil((snaplen * RING_PACKETS) / 1024)));
}

/** The options of a capture, checked, with their defaults; `baseFilter` the BPF filter without the marker's. */
type CaptureSettings = {
  port: number | undefined;
  snaplen: number;
  maxBytes: number;
  drainMs: number;
  startTimeoutMs: number;
  stopTimeoutMs: number;
  device: string;
  baseFilter: string;
};

/**
 * {@link capturePackets}'s options checked, in order, with their defaults.
 * @throws RangeError naming the first bad option.
 */
function captureSettings(options: CaptureOptions): CaptureSettings {
  const port = options.port === undefined ? undefined : checkInteger('port', options.port, 1, 65_535);
  const snaplen = checkInteger('snaplenBytes', options.snaplenBytes ?? 262_144, 68, 262_144);
  const maxBytes = checkInteger('maxBytes', options.maxBytes ?? 10 * 1024 * 1024, 1024, 100 * 1024 * 1024);
  const drainMs = checkInteger('drainMs', options.drainMs ?? 200, 0, 10_000);
  const startTimeoutMs = checkInteger('startTimeoutMs', options.startTimeoutMs ?? 5000, 1, 60_000);
  const stopTimeoutMs = checkInteger('stopTimeoutMs', options.stopTimeoutMs ?? 2000, 1, 60_000);
  const device = options.interface ?? 'any';
  if (!INTERFACE_NAME.test(device) || device.startsWith('-')) {
    throw new RangeError(`interface must be an interface name or any; got ${JSON.stringify(device)}`);
  }
  if (typeof options.during !== 'function') {
    throw new RangeError(`during must be a function; got ${typeof options.during}`);
  }
  if (options.local !== undefined && port === undefined) {
    throw new RangeError('local needs port: a capture of one connection names both of its ends');
  }
  const baseFilter =
    options.local === undefined
      ? captureFilter(options.host, port)
      : connectionFilter(options.local, { address: options.host, port: port as number });
  return { port, snaplen, maxBytes, drainMs, startTimeoutMs, stopTimeoutMs, device, baseFilter };
}

/** What a running capture is made of: its settings, its marker, its tcpdump, and the signal `during` gets. */
type CaptureParts = {
  settings: CaptureSettings;
  marker: Marker | null;
  tcpdump: Tcpdump;
  /** Aborts when the capture reaches `maxBytes` or the caller's signal aborts. */
  duringSignal: LinkedSignal;
};

/**
 * The pcap file written from tcpdump's stream: whole records only (so the file stays valid when
 * `maxBytes` stops it early), the marker's record left out, the packets counted.
 */
class CaptureWriter {
  readonly splitter = new PcapStreamSplitter();
  sizeBytes = 0;
  packets = 0;
  /** The capture reached `maxBytes`: later packets are not in the file. */
  truncated = false;
  /** Why tcpdump's stream could not be split into records, when it could not. */
  streamError: unknown = null;
  readonly #fd: number;
  readonly #file: string;
  readonly #parts: CaptureParts;
  #fileOpen = true;

  constructor(fd: number, file: string, parts: CaptureParts) {
    this.#fd = fd;
    this.#file = file;
    this.#parts = parts;
  }

  /** Writes the whole records of `chunk`; at `maxBytes`, aborts `during` and stops tcpdump instead. */
  write(chunk: Buffer): void {
    if (!this.#fileOpen || this.truncated || this.streamError !== null) return;
    const { settings, marker, tcpdump, duringSignal } = this.#parts;
    let pieces: Buffer[];
    try {
      pieces = this.splitter.push(chunk);
    } catch (err) {
      this.streamError = err;
      tcpdump.kill();
      return;
    }
    for (const piece of pieces) {
      // The marker is ours, never the file's.
      if (this.sizeBytes > 0 && marker?.isMarker(piece)) continue;
      if (this.sizeBytes + piece.length > settings.maxBytes) {
        this.truncated = true;
        duringSignal.abort(new Error(`the capture reached maxBytes (${settings.maxBytes})`));
        void tcpdump.stop(settings.stopTimeoutMs);
        return;
      }
      writeSync(this.#fd, piece);
      // The first piece is the file header; every other one a packet.
      if (this.sizeBytes > 0) this.packets++;
      this.sizeBytes += piece.length;
    }
  }

  /** Closes the file (once). */
  close(): void {
    if (this.#fileOpen) closeSync(this.#fd);
    this.#fileOpen = false;
  }

  /** Closes and removes the file. */
  discard(): void {
    this.close();
    rmSync(this.#file, { force: true });
  }
}

/**
 * Runs `during` once tcpdump listens, then drains for `drainMs`, waits for the marker to pass
 * through, and stops tcpdump. A rejection of `during` stops tcpdump, removes the file and is
 * passed on.
 * @throws OUTPOST_ERR_ABORTED when `signal` aborts; what tcpdump's start or `during` rejects with.
 */
async function captureDuring(
  during: CaptureOptions['during'],
  signal: AbortSignal | undefined,
  { settings, marker, tcpdump, duringSignal }: CaptureParts,
  writer: CaptureWriter,
): Promise<void> {
  const { drainMs, stopTimeoutMs } = settings;
  await raceAbort(tcpdump.ready, signal, CAPTURE_ABORTED);
  let duringFailed = false;
  let duringError: unknown;
  try {
    const running = during(duringSignal.signal);
    // Abort wins the race, so `during` may still settle later: never unhandled.
    running.catch(() => {});
    await raceAbort(running, signal, CAPTURE_ABORTED);
  } catch (err) {
    if (signal?.aborted) throw err;
    duringFailed = true;
    duringError = err;
  }
  if (duringFailed) {
    await tcpdump.stop(stopTimeoutMs);
    writer.discard();
    throw duringError;
  }
  if (!writer.truncated && drainMs > 0) await sleep(drainMs, signal);
  // tcpdump drops what it has not read yet when it is stopped: first see it read the marker.
  if (marker !== null && !writer.truncated)
    await raceAbort(marker.passThrough(stopTimeoutMs), signal, CAPTURE_ABORTED);
  await raceAbort(tcpdump.stop(stopTimeoutMs), signal, CAPTURE_ABORTED);
}

const availability = new Map<string, Promise<boolean>>();

/**
 * True when tcpdump is installed and may capture on `interface` (default `any`): it is started
 * once with a filter that matches nothing and stopped as soon as it listens (about 50 ms).
 * The answer is kept per tcpdump path and interface for the life of the process.
 */
export function isCaptureAvailable(
  options: { interface?: string; tcpdumpPath?: string } = {},
): Promise<boolean> {
  const device = options.interface ?? 'any';
  const path = options.tcpdumpPath ?? 'tcpdump';
  const key = `${path}\0${device}`;
  let answer = availability.get(key);
  if (answer === undefined) {
    answer = (async () => {
      if (!INTERFACE_NAME.test(device) || device.startsWith('-')) return false;
      const tcpdump = new Tcpdump(path, ['-i', device, '-p', '-n', '-s', '68', '-w', '-', 'less 1'], 5000);
      tcpdump.child.stdout?.resume();
      try {
        await tcpdump.ready;
        return true;
      } catch {
        return false;
      } finally {
        await tcpdump.stop(2000);
      }
    })();
    availability.set(key, answer);
  }
  return answer;
}
