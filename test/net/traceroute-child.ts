/**
 * Runs one traceRoute and prints `{ trace }` or `{ error: { code, message } }` as JSON on
 * stdout. test/net/traceroute.test.ts starts it in another namespace as another user
 * (`ip netns exec … setpriv --reuid=nobody …`), which a test cannot become in-process.
 * Usage: tsx traceroute-child.ts <target> '<TraceRouteOptions as JSON>'
 */
import { traceRoute } from '../../src/net/traceroute/index.js';

const [target = '', options = '{}'] = process.argv.slice(2);
try {
  const trace = await traceRoute(target, JSON.parse(options));
  process.stdout.write(JSON.stringify({ trace }));
} catch (err) {
  const { code, message } = err as { code?: unknown; message?: unknown };
  process.stdout.write(JSON.stringify({ error: { code, message } }));
}
