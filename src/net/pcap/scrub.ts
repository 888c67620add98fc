import type { Scrubber } from '../../sandbox/scrub.js';
import { tcpSegment } from './decode.js';
import { readPcap } from './format.js';

/**
 * How much of a TCP stream's preceding payload is searched together with each segment, bytes:
 * a secret up to this long is found even when segment boundaries split it.
 */
export const STREAM_WINDOW_BYTES = 16 * 1024;

/** A run of stream bytes still in the window: where they sit in the output file. */
type Run = { offset: number; length: number };
type FlowState = { nextSequence: number; window: Run[]; windowBytes: number };

/**
 * Overwrites every secret in a pcap file's packet bytes with `*` of the same length
 * (`Scrubber.bytes`, design.md §3 "scrubbing"), so every length field stays true and tcpdump
 * and Wireshark still read the file. Header fields and timestamps are kept as they are.
 *
 * Two passes: each record's bytes on their own, then each TCP stream (per direction, in
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
  if (scrubber.size === 0) return out;
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
  return out;
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
