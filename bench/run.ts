/**
 * `npm run bench`: benchmarks against the reference tools (design.md §5). Build first
 * (`npm run build`), then run `node dist/bench/run.js`; root or ping_group_range for ICMP.
 */
import { runIcmpBench } from './icmp.js';

await runIcmpBench();
