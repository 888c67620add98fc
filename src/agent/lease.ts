import type { Job } from '../protocol/index.js';
import { backoffMs } from '../common/abort.js';
import { hasCode, type OutpostError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { linkSignal } from '../common/linked-signal.js';
import type { ServiceClient } from './service-client.js';

/** Options of {@link renewLeaseUntilStopped}. */
export type LeaseRenewalOptions = {
  client: Pick<ServiceClient, 'renewLease'>;
  job: Pick<Job, 'jobId' | 'leaseMs'>;
  /** Called once when the service says the lease is gone (409, or 404 on the lease). */
  onLost: (err: OutpostError) => void;
  /** Aborts an in-flight renewal at the end of the shutdown grace. */
  hardSignal: AbortSignal;
  /** Back-off after a failed renewal, milliseconds; never later than a third of the lease. */
  backoff: { baseMs: number; capMs: number };
  log: Logger;
};

/**
 * Renews a job's lease every `leaseMs / 3` (docs/protocol.md, "Leases"), following
 * the `leaseMs` each renewal grants. A transient failure is retried sooner, with
 * back-off, but never later than the regular renewal. Timers are unref()ed.
 *
 * @returns a function that stops renewing (idempotent) and aborts a renewal in flight.
 */
export function renewLeaseUntilStopped(options: LeaseRenewalOptions): () => void {
  const { client, job, log } = options;
  // Aborted by stop() or by the hard signal; ends the renewal in flight either way.
  const stopped = linkSignal([options.hardSignal]);
  let leaseMs = job.leaseMs;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;

  const schedule = (delayMs: number) => {
    timer = setTimeout(() => void renew(), Math.max(1, delayMs));
    timer.unref();
  };
  const renew = async () => {
    try {
      const lease = await client.renewLease(job.jobId, stopped.signal);
      leaseMs = lease.leaseMs > 0 ? lease.leaseMs : leaseMs;
      failures = 0;
      log.debug({ leaseExpiresAt: lease.leaseExpiresAt }, 'lease renewed');
    } catch (err) {
      if (stopped.signal.aborted) return;
      if (hasCode(err, 'OUTPOST_ERR_LEASE_LOST')) {
        log.warn({ err }, 'lease lost; aborting job');
        options.onLost(err);
        return;
      }
      failures += 1;
      log.warn({ err, failures }, 'lease renewal failed; retrying');
    }
    if (stopped.signal.aborted) return;
    const regularMs = leaseMs / 3;
    schedule(
      failures === 0
        ? regularMs
        : Math.min(regularMs, backoffMs(failures - 1, options.backoff.baseMs, options.backoff.capMs)),
    );
  };

  schedule(leaseMs / 3);
  return () => {
    clearTimeout(timer);
    stopped.abort();
  };
}
