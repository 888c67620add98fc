/**
 * A misbehaving ICMP host for tests, run inside a test namespace whose kernel does not answer
 * pings (net.ipv4.icmp_echo_ignore_all=1): answers each IPv4 echo request after a delay taken
 * in turn from the ms values given as arguments. Prints "ready" once listening.
 * Usage: tsx test/helpers/icmp-responder.ts 0 0 80
 */
import { ICMP_TYPES, loadIcmpAddon } from '../../src/net/icmp/addon.js';

const delaysMs = process.argv.slice(2).map(Number);
if (delaysMs.length === 0 || delaysMs.some((d) => !(d >= 0))) {
  console.error('usage: icmp-responder.ts <delayMs>...');
  process.exit(2);
}
const addon = loadIcmpAddon();
let answered = 0;
const { socket } = addon.open(
  4,
  2,
  ICMP_TYPES[4].request,
  (_type, identifier, sequence, _ttl, _rx, from, bytes) => {
    const delayMs = delaysMs[answered++ % delaysMs.length]!;
    setTimeout(() => {
      try {
        addon.send(socket, from, ICMP_TYPES[4].reply, identifier, sequence, bytes - 8);
      } catch {
        // The test host is going away.
      }
    }, delayMs);
  },
);
// The socket does not hold the loop open by itself.
setInterval(() => {}, 60_000);
process.on('SIGTERM', () => process.exit(0));
console.log('ready');
