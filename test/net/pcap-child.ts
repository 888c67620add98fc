/**
 * Asks isCaptureAvailable() and tries one short capturePackets() on loopback, then prints
 * `{ available, packets, error }` as JSON. test/net/pcap.test.ts runs it as another user
 * (`setpriv --reuid=nobody …`, with or without CAP_NET_RAW), which a test cannot become in-process.
 */
import { rmSync } from 'node:fs';
import { capturePackets, isCaptureAvailable } from '../../src/net/pcap/index.js';

const available = await isCaptureAvailable();
let packets: number | null = null;
let error: { code: unknown; message: unknown } | null = null;
try {
  const capture = await capturePackets({ host: '127.0.0.1', port: 9, drainMs: 0, during: async () => {} });
  packets = capture.packets;
  rmSync(capture.file);
} catch (err) {
  const { code, message } = err as { code?: unknown; message?: unknown };
  error = { code, message };
}
process.stdout.write(JSON.stringify({ available, packets, error }));
