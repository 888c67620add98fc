/**
 * A misbehaving ICMP host for tests, run inside a test namespace whose kernel does not answer
 * pings (net.ipv4.icmp_echo_ignore_all=1): answers each IPv4 echo request after a delay taken
 * in turn from the ms values given as arguments. Prints "ready" once listening.
 * Usage: tsx test/helpers/icmp-responder.ts 0 0 80
 *
 * Options before the delays:
 *  --delay-from-size=BASE  each request's delay is its payload size less BASE bytes, in ms (a
 *                          request of BASE + 30 bytes of payload is answered after 30 ms), instead of the list;
 *  --duplicate-after=MS    every reply is sent a second time, MS after the first.
 */
import { ICMP_TYPES, loadIcmpAddon } from '../../src/net/icmp/addon.js';

const options = process.argv.slice(2).filter((a) => a.startsWith('--'));
const option = (name: string): number | undefined => {
  const value = options.find((o) => o.startsWith(`--${name}=`))?.split('=')[1];
  return value === undefined ? undefined : Number(value);
};
const sizeBase = option('delay-from-size');
const duplicateAfterMs = option('duplicate-after');
const delaysMs = process.argv
  .slice(2)
  .filter((a) => !a.startsWith('--'))
  .map(Number);
if (
  (delaysMs.length === 0 && sizeBase === undefined) ||
  delaysMs.some((d) => !(d >= 0)) ||
  (sizeBase !== undefined && !(sizeBase >= 0)) ||
  (duplicateAfterMs !== undefined && !(duplicateAfterMs >= 0))
) {
  console.error('usage: icmp-responder.ts [--delay-from-size=BASE] [--duplicate-after=MS] <delayMs>...');
  process.exit(2);
}
const addon = loadIcmpAddon();
let answered = 0;
const { socket } = addon.open(
  4,
  2,
  ICMP_TYPES[4].request,
  (_type, identifier, sequence, _ttl, _rx, from, bytes) => {
    const payloadBytes = bytes - 8;
    const delayMs =
      sizeBase === undefined ? delaysMs[answered++ % delaysMs.length]! : Math.max(0, payloadBytes - sizeBase);
    const reply = () => {
      try {
        addon.send(socket, from, ICMP_TYPES[4].reply, identifier, sequence, payloadBytes);
      } catch {
        // The test host is going away.
      }
    };
    setTimeout(reply, delayMs);
    if (duplicateAfterMs !== undefined) setTimeout(reply, delayMs + duplicateAfterMs);
  },
);
// The socket does not hold the loop open by itself.
setInterval(() => {}, 60_000);
process.on('SIGTERM', () => process.exit(0));
console.log('ready');
