import {
  CLAIM_ACK_WINDOW_MS,
  type CheckType,
  type ClaimRequest,
  type Job,
  JOB_CLASSES,
  type Location,
  type JobClass,
  jobClassOf,
  PROTOCOL_VERSION,
} from '../protocol/index.js';
import { backoffMs, sleep } from '../common/abort.js';
import { hasCode } from '../common/errors.js';
import { linkSignal } from '../common/linked-signal.js';
import type { Logger } from '../common/logger.js';
import { VERSION } from '../common/paths.js';
import type { BackoffOptions, JobDispatcher } from './dispatcher.js';
import type { AgentMetrics } from './metrics.js';
import { CLAIM_HEARTBEAT_SECONDS, isTransient, type ServiceClient } from './service-client.js';

/** Shortest time between two claims that brought no job, milliseconds: no hot loop when `waitSeconds` is 0. */
const MIN_EMPTY_CLAIM_INTERVAL_MS = 1000;

/** Options of {@link runPoller}. */
export type PollerOptions = {
  client: Pick<ServiceClient, 'claim' | 'acknowledge'>;
  dispatcher: Pick<JobDispatcher, 'freeSlots' | 'waitForFreeSlot' | 'dispatch' | 'reject'>;
  /** Check types advertised in claims. */
  checkTypes: readonly CheckType[];
  /**
   * Asked before each claim for each of `checkTypes`: false leaves the type out of that claim (browser
   * checks while no browser slot or memory headroom is free, or their runtime failed its
   * compatibility check). Default: every type, always.
   */
  claimable?: (checkType: CheckType) => boolean;
  /** Runtime ids advertised in each claim. */
  runtimes: readonly string[];
  /**
   * Data-center locations an account-key agent serves (`OUTPOST_AGENT_LOCATIONS`); undefined: every one. The
   * service ignores them for a private-location key.
   */
  locations?: readonly Location[];
  /** The host name sent with claims (shown with the agent's results). */
  hostName?: string;
  /** Seconds each claim long-polls, 0–20. */
  claimWaitSeconds: number;
  /** Stops the loop and aborts the claim in flight. */
  signal: AbortSignal;
  logger: Logger;
  /** Called after every successful claim (readiness, `lastSuccessfulPollAt`). */
  onClaimSuccess?: () => void;
  /** Back-off on transient errors; default 1 s → 30 s. */
  backoff?: BackoffOptions;
  metrics?: AgentMetrics;
};

/**
 * The claim loops (docs/architecture.md, "The agent"): one loop per job class the agent runs, each
 * with its own long poll, so a slot freed in one class is claimed at once even while the
 * other class's long poll is waiting (a single loop asking for the main class only kept
 * freed uptime slots idle for a whole `claimWaitSeconds`, issue 9 item 2.7). Each loop
 * claims only when a slot of its class is free and asks only for those free slots; its
 * first claim does not wait (`waitSeconds` 0), later ones long-poll `claimWaitSeconds`,
 * at most one empty claim per second; transient errors (network, 408, 429, 5xx) are
 * retried with jittered exponential back-off (a `Retry-After` is honoured up to the cap).
 *
 * @returns resolves when `signal` aborts.
 * @throws the ServiceError of a fatal answer: `OUTPOST_ERR_UNAUTHORIZED` (401/403) or
 *   `OUTPOST_ERR_PROTOCOL` (400 or another 4xx on claim); the other loop is stopped and
 *   the agent must exit non-zero.
 */
export async function runPoller(options: PollerOptions): Promise<void> {
  const classes = JOB_CLASSES.filter((c) => options.checkTypes.some((t) => jobClassOf(t) === c));
  // A fatal answer in one loop ends the other one too.
  const stop = linkSignal([options.signal]);
  try {
    await Promise.all(
      classes.map((jobClass) =>
        runClassPoller(jobClass, { ...options, signal: stop.signal }).catch((err: unknown) => {
          stop.abort(err);
          throw err;
        }),
      ),
    );
  } finally {
    stop.dispose();
  }
}

/** The claim loop of one job class: claims with that class's free slots only (the other's are 0). */
async function runClassPoller(jobClass: JobClass, options: PollerOptions): Promise<void> {
  const { client, dispatcher, signal } = options;
  const logger = options.logger.child({ jobClass });
  const backoff = options.backoff ?? { baseMs: 1000, capMs: 30_000 };
  const classTypes = options.checkTypes.filter((t) => jobClassOf(t) === jobClass);
  const claimable = options.claimable ?? (() => true);
  let failures = 0;
  // The first claim does not wait: its answer proves the key and the route at once, so
  // readiness turns 200 at start rather than after a whole empty long poll.
  let firstClaim = true;

  while (!signal.aborted) {
    const free = dispatcher.freeSlots()[jobClass];
    if (free === 0) {
      if (!(await waitOrStop(dispatcher.waitForFreeSlot([jobClass], signal)))) return;
      continue;
    }
    const checkTypes = classTypes.filter(claimable);
    if (checkTypes.length === 0) {
      // Nothing of this class can be taken now (no browser slot or headroom): look again shortly.
      if (!(await waitOrStop(sleep(MIN_EMPTY_CLAIM_INTERVAL_MS, signal)))) return;
      continue;
    }
    const freeSlots: Record<JobClass, number> = { uptime: 0, main: 0 };
    freeSlots[jobClass] = free;

    const request: ClaimRequest = {
      agentVersion: VERSION,
      protocolVersion: PROTOCOL_VERSION,
      checkTypes,
      runtimes: [...options.runtimes],
      freeSlots,
      waitSeconds: firstClaim ? 0 : options.claimWaitSeconds,
      acknowledges: true,
      heartbeatSeconds: CLAIM_HEARTBEAT_SECONDS,
      ...(options.locations ? { locations: [...options.locations] } : {}),
      ...(options.hostName ? { hostName: options.hostName.slice(0, 255) } : {}),
    };
    const t0 = performance.now();
    try {
      const answer = await client.claim(request, signal);
      if (failures > 0) logger.info({ failures }, 'service reachable again');
      failures = 0;
      const wasFirst = firstClaim;
      firstClaim = false;
      const perClass = { uptime: 0, main: 0 };
      for (const job of answer.jobs) perClass[jobClassOf(job.check.checkType as CheckType)] += 1;
      options.metrics?.claimed('ok', perClass);
      options.onClaimSuccess?.();
      if (perClass.uptime > freeSlots.uptime || perClass.main > freeSlots.main) {
        logger.warn({ freeSlots, received: perClass }, 'claim answer holds more jobs than free slots');
      }
      if (answer.jobs.length + answer.rejected.length > 0) {
        logger.debug({ jobs: answer.jobs.length, rejected: answer.rejected.length }, 'jobs claimed');
      }
      // Claimed jobs are ours once acknowledged, even when shutdown began meanwhile: run them, the drain waits
      // for them. Jobs the service no longer holds for us are dropped unrun.
      for (const job of await acknowledged(answer.jobs, options, logger)) dispatcher.dispatch(job);
      for (const rejected of answer.rejected) dispatcher.reject(rejected);
      if (!wasFirst && answer.jobs.length === 0 && answer.rejected.length === 0) {
        const restMs = MIN_EMPTY_CLAIM_INTERVAL_MS - (performance.now() - t0);
        if (restMs > 0 && !(await waitOrStop(sleep(restMs, signal)))) return;
      }
    } catch (err) {
      if (signal.aborted || hasCode(err, 'OUTPOST_ERR_ABORTED')) return;
      if (!isTransient(err)) {
        options.metrics?.claimed('fatal_error');
        logger.error({ err }, 'claim refused; the agent cannot go on');
        throw err;
      }
      options.metrics?.claimed('transient_error');
      const retryAfterMs = (err as { retryAfterMs?: number | null }).retryAfterMs ?? 0;
      // A claim that failed after waiting at least its back-off (a silent service, given up after its missed
      // heartbeats; a long poll cut by a dying replica) has waited its turn: the next claim goes out at once,
      // through a balancer to a replica that answers. A claim refused sooner waits the whole back-off.
      const backoffDelayMs = backoffMs(failures, backoff.baseMs, backoff.capMs);
      const waitedMs = performance.now() - t0;
      const delayMs = Math.min(
        backoff.capMs,
        Math.max(retryAfterMs, waitedMs >= backoffDelayMs ? 0 : backoffDelayMs),
      );
      failures += 1;
      logger.warn({ err, failures, delayMs: Math.round(delayMs) }, 'claim failed; backing off');
      if (!(await waitOrStop(sleep(delayMs, signal)))) return;
    }
  }
}

/** Tries to acknowledge a claim's answer this many times (1 s apart) before giving its jobs up. */
const ACK_ATTEMPTS = 5;

/**
 * Acknowledges the jobs of a claim's answer (docs/protocol.md, "Acknowledgement"), retrying transient
 * failures a few times well within the service's hold (CLAIM_ACK_WINDOW_MS). Never throws.
 * @returns the jobs that are the agent's to run: those the service acknowledged. None when every attempt
 *   failed: the service then gives the jobs to the queue again, unrun, rather than as failures.
 */
async function acknowledged(jobs: readonly Job[], options: PollerOptions, logger: Logger): Promise<Job[]> {
  if (jobs.length === 0) return [];
  // Not the loop's signal: a shutdown that began meanwhile still acknowledges what the answer brought.
  const signal = AbortSignal.timeout(CLAIM_ACK_WINDOW_MS / 2);
  for (let attempt = 1; attempt <= ACK_ATTEMPTS; attempt++) {
    try {
      const answer = await options.client.acknowledge(
        jobs.map((j) => j.jobId),
        signal,
      );
      if (answer.lost.length > 0) {
        logger.warn(
          { lost: answer.lost },
          'claimed jobs were no longer held for this agent; not running them',
        );
      }
      const held = new Set(answer.acknowledged);
      return jobs.filter((j) => held.has(j.jobId));
    } catch (err) {
      if (!isTransient(err) || attempt === ACK_ATTEMPTS || signal.aborted) {
        logger.warn(
          { err, jobs: jobs.length },
          'could not acknowledge claimed jobs; the service will queue them again',
        );
        return [];
      }
      await sleep(1000, signal).catch(() => {});
    }
  }
  return [];
}

/** Awaits `wait`; false when it rejected because the loop's signal aborted. */
async function waitOrStop(wait: Promise<void>): Promise<boolean> {
  try {
    await wait;
    return true;
  } catch (err) {
    if (hasCode(err, 'OUTPOST_ERR_ABORTED')) return false;
    throw err;
  }
}
