/**
 * Runs one ICMP job with the real executor and prints its outcome as JSON on stdout, so a
 * test can run the executor inside a network namespace (`ip netns exec NS tsx this JOB_JSON`).
 */
import { createIcmpExecutor } from '../../src/checks/icmp/index.js';
import type { Job } from '../../src/protocol/index.js';
import { pino } from 'pino';

const job = JSON.parse(process.argv[2] ?? '') as Job;
const executor = createIcmpExecutor({ intervalMs: 10 });
const outcome = await executor.run(job, {
  signal: AbortSignal.timeout(job.timeoutMs),
  log: pino({ level: 'silent' }),
});
await executor.close();
process.stdout.write(JSON.stringify(outcome));
