/**
 * Pings 127.0.0.1 once, then closes the Pinger from the promise continuation, which runs
 * while the native receive callback still holds its callback scope. Prints "closed" and
 * exits 0; a crash here is a bug in native/icmp.c.
 */
import { Pinger } from '../../src/net/icmp/index.js';

const pinger = new Pinger({ socketPreference: 'raw' });
await pinger.ping({ address: '127.0.0.1', family: 4 });
pinger.close();
console.log('closed');
