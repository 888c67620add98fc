import type { Scrubber } from '../../common/scrub.js';
import { CredentialHeaderMasker } from './credentials.js';
import { tcpSegment } from './decode.js';
import { type PcapFile, readPcap } from './format.js';

/**
 * How much of a TCP stream's preceding payload is searched together with each segment, bytes:
 * a secret up to this long is found even when segment boundaries split it.
 */
export const STREAM_WINDOW_BYTES = 16 * 1024;

/** A run of stream bytes still in the window: where they sit in the output file. */
type Run = { offset: number; length: number };
type FlowState = { nextSequence: number; window: Run[]; windowBytes: number };

/** Masked ranges of a stream remembered for its retransmissions, at most (the oldest go first). */
const MASKED_RANGES_KEPT = 4096;

/** One direction of a TCP stream as the credential pass follows it. */
type CredentialFlow = {
  masker: CredentialHeaderMasker;
  /** Sequence number of the next byte expected; null at the start or after a payload cut short. */
  next: number | null;
  /** Sequence ranges [start, end) masked so far, merged, oldest first: re-masked in retransmissions. */
  masked: [number, number][];
  /** A payload of this stream was cut by the snaplen: bytes after it were never captured. */
  cut: boolean;
};

/** `a - b` in 32-bit sequence space (RFC 9293 §3.4): negative when `a` comes before `b`. */
function sequenceDelta(a: number, b: number): number {
  return (a - b) | 0;
}

/**
 * Masks the values of credential headers (SECRET_HEADERS: Authorization, Cookie, …) in
 * every TCP stream of `file`, in place in `out`, whatever their values are: each direction of
 * each connection is followed in sequence order, so a header line that segment boundaries
 * split is masked in every record holding part of it; a retransmission gets the masks of the
 * bytes it repeats; after a gap (a lost or uncaptured segment) bytes up to the next line end
 * are masked, as they may continue a value.
 */
function maskCredentialHeaders(file: PcapFile, out: Buffer): void {
  const flows = new Map<string, CredentialFlow>();
  for (const record of file.records) {
    const segment = tcpSegment(file.linkType, record.data);
    if (segment === null || segment.payloadEnd <= segment.payloadStart) continue;
    let flow = flows.get(segment.flow);
    if (flow === undefined) {
      flow = { masker: new CredentialHeaderMasker(), next: null, masked: [], cut: false };
      flows.set(segment.flow, flow);
    }
    const base = record.dataOffset + segment.payloadStart;
    const length = segment.payloadEnd - segment.payloadStart;
    const sequence = segment.sequence;
    // Bytes of this payload already seen (a retransmission): masked where they were masked.
    let fresh = 0;
    if (flow.next !== null) {
      const delta = sequenceDelta(sequence, flow.next);
      if (delta < 0) {
        fresh = Math.min(length, -delta);
        for (const [from, to] of flow.masked) {
          const start = Math.max(0, sequenceDelta(from, sequence));
          const end = Math.min(fresh, sequenceDelta(to, sequence));
          if (end > start) out.fill(0x2a, base + start, base + end);
        }
      } else if (delta > 0) {
        flow.masker.lost();
      }
    } else if (flow.cut) {
      // The stream was cut short before: where this payload starts within it is unknown.
      flow.masker.lost();
    }
    if (fresh < length) {
      const ranges = flow.masked;
      flow.masker.feed(out, base + fresh, base + length, (index) => {
        const at = (sequence + (index - base)) >>> 0;
        const last = ranges[ranges.length - 1];
        if (last !== undefined && last[1] === at) last[1] = (at + 1) >>> 0;
        else {
          ranges.push([at, (at + 1) >>> 0]);
          if (ranges.length > MASKED_RANGES_KEPT) ranges.shift();
        }
      });
      flow.next = (sequence + length) >>> 0;
    }
    if (!segment.complete) {
      // The snaplen cut this payload: the stream's next bytes were not captured.
      flow.next = null;
      flow.masker.lost();
      flow.cut = true;
    }
  }
}

/**
 * Overwrites every secret in a pcap file's packet bytes with `*` of the same length
 * (`Scrubber.bytes`, docs/architecture.md, "The agent"), so every length field stays true and tcpdump
 * and Wireshark still read the file. Header fields and timestamps are kept as they are.
 *
 * First the values of credential headers (Authorization, Proxy-Authorization, Cookie,
 * Set-Cookie, x-api-key) in every TCP stream are masked whether or not they are secrets the
 * scrubber knows (see maskCredentialHeaders). Then two passes: each record's bytes on their own, then each TCP stream (per direction, in
 * capture order) with the last {@link STREAM_WINDOW_BYTES} bytes of its payload joined to each
 * in-order segment, so a secret that segment boundaries split is masked in both records.
 *
 * Limits: a secret split across segments that were captured out of order or retransmitted
 * differently, across IP fragments, or across UDP datagrams is not found; a secret cut off by
 * the snaplen leaves its captured prefix unmasked when that prefix is not itself a secret
 * form; checksums are not recomputed (tools flag them when asked to verify); compressed,
 * encrypted (TLS) or HPACK-Huffman-coded (HTTP/2) secrets are not recognised. A record cut
 * short at the end of the input is dropped.
 * @throws Error (from readPcap) when `buffer` is not a classic pcap file.
 */
export function scrubPcap(buffer: Buffer, scrubber: Scrubber): Buffer {
  const file = readPcap(buffer);
  const out = Buffer.from(buffer.subarray(0, buffer.length - file.trailingBytes));
  // An overflowed scrubber masks every byte (it could not search for every secret).
  if (scrubber.size > 0 || scrubber.overflowed) scrubSecrets(file, out, scrubber);
  // Last: the passes above copy record bytes from the input.
  maskCredentialHeaders(file, out);
  return out;
}

/** The scrubber's two passes: each record on its own, then each TCP stream's joined window. */
function scrubSecrets(file: PcapFile, out: Buffer, scrubber: Scrubber): void {
  for (const record of file.records) {
    out.set(scrubber.bytes(record.data), record.dataOffset);
  }

  const flows = new Map<string, FlowState>();
  for (const record of file.records) {
    const segment = tcpSegment(file.linkType, record.data);
    if (segment === null || segment.payloadEnd <= segment.payloadStart) continue;
    const payload: Run = {
      offset: record.dataOffset + segment.payloadStart,
      length: segment.payloadEnd - segment.payloadStart,
    };
    const flow = flows.get(segment.flow);
    if (flow !== undefined && flow.windowBytes > 0 && flow.nextSequence === segment.sequence) {
      scrubJoined(out, [...flow.window, payload], scrubber);
      flow.window.push(payload);
      flow.windowBytes += payload.length;
      trimWindow(flow);
    } else {
      // First payload of the flow, a gap, or a retransmission: a new window starts here.
      const fresh: FlowState = { nextSequence: 0, window: [payload], windowBytes: payload.length };
      trimWindow(fresh);
      flows.set(segment.flow, fresh);
    }
    const state = flows.get(segment.flow)!;
    state.nextSequence = (segment.sequence + payload.length) >>> 0;
    // A payload cut by the snaplen breaks the stream: the next segment cannot be joined to it.
    if (!segment.complete) {
      state.window = [];
      state.windowBytes = 0;
    }
  }
}

/** Keeps the last STREAM_WINDOW_BYTES of a flow's window. */
function trimWindow(flow: FlowState): void {
  while (flow.windowBytes > STREAM_WINDOW_BYTES) {
    const first = flow.window[0]!;
    const excess = flow.windowBytes - STREAM_WINDOW_BYTES;
    if (first.length <= excess) {
      flow.window.shift();
      flow.windowBytes -= first.length;
    } else {
      flow.window[0] = { offset: first.offset + excess, length: first.length - excess };
      flow.windowBytes -= excess;
    }
  }
}

/** Scrubs the runs as one byte string and writes every masked byte back where it came from. */
function scrubJoined(out: Buffer, runs: Run[], scrubber: Scrubber): void {
  const joined = Buffer.concat(runs.map((run) => out.subarray(run.offset, run.offset + run.length)));
  const scrubbed = scrubber.bytes(joined);
  let at = 0;
  for (const run of runs) {
    for (let i = 0; i < run.length; i++, at++) {
      if (scrubbed[at] !== joined[at]) out[run.offset + i] = scrubbed[at]!;
    }
  }
}
