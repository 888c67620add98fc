import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { JobClass } from '../protocol/index.js';
import { VERSION } from '../common/paths.js';

/** How a job ended, as counted in `outpost_agent_jobs_total{outcome}`. */
export type JobOutcomeLabel = 'passed' | 'failed' | 'degraded' | 'error' | 'lease_lost' | 'dropped';
/** How a claim ended, as counted in `outpost_agent_claims_total{outcome}`. */
export type ClaimOutcomeLabel = 'ok' | 'transient_error' | 'fatal_error';
/** How a result post ended, as counted in `outpost_agent_result_posts_total{outcome}`. */
export type ResultOutcomeLabel = 'stored' | 'duplicate' | 'lease_lost' | 'refused' | 'gave_up' | 'retry';

/** Live values read when `/metrics` is scraped. */
export type MetricsGauges = () => {
  runningJobs: Record<JobClass, number>;
  freeSlots: Record<JobClass, number>;
  ready: boolean;
};

/**
 * Prometheus metrics of one agent, in a registry of its own (so several agents
 * in one process, as in tests, do not clash), with Node's default process metrics.
 */
export class AgentMetrics {
  /** The registry `/metrics` serves. */
  readonly registry = new Registry();
  readonly #jobs: Counter<'check_type' | 'outcome'>;
  readonly #jobDuration: Histogram<'check_type'>;
  readonly #claims: Counter<'outcome'>;
  readonly #claimedJobs: Counter<'job_class'>;
  readonly #results: Counter<'outcome'>;

  constructor(gauges: MetricsGauges) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'outpost_agent_' });
    new Gauge({ name: 'outpost_agent_info', help: 'Agent version', labelNames: ['version'], registers }).set(
      { version: VERSION },
      1,
    );
    new Gauge({
      name: 'outpost_agent_ready',
      help: '1 when the readiness probe answers 200',
      registers,
      collect() {
        this.set(gauges().ready ? 1 : 0);
      },
    });
    new Gauge({
      name: 'outpost_agent_running_jobs',
      help: 'Jobs running or queued, per job class',
      labelNames: ['job_class'],
      registers,
      collect() {
        for (const [jobClass, value] of Object.entries(gauges().runningJobs))
          this.set({ job_class: jobClass }, value);
      },
    });
    new Gauge({
      name: 'outpost_agent_free_slots',
      help: 'Free job slots per job class',
      labelNames: ['job_class'],
      registers,
      collect() {
        for (const [jobClass, value] of Object.entries(gauges().freeSlots))
          this.set({ job_class: jobClass }, value);
      },
    });
    this.#jobs = new Counter({
      name: 'outpost_agent_jobs_total',
      help: 'Jobs finished, by check type and outcome',
      labelNames: ['check_type', 'outcome'],
      registers,
    });
    this.#jobDuration = new Histogram({
      name: 'outpost_agent_job_duration_seconds',
      help: 'Wall time of a run, seconds',
      labelNames: ['check_type'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 240],
      registers,
    });
    this.#claims = new Counter({
      name: 'outpost_agent_claims_total',
      help: 'Claim calls, by outcome',
      labelNames: ['outcome'],
      registers,
    });
    this.#claimedJobs = new Counter({
      name: 'outpost_agent_claimed_jobs_total',
      help: 'Jobs received from claims, per job class',
      labelNames: ['job_class'],
      registers,
    });
    this.#results = new Counter({
      name: 'outpost_agent_result_posts_total',
      help: 'Result post attempts, by outcome',
      labelNames: ['outcome'],
      registers,
    });
  }

  /** Counts a finished job; `durationMs` is the executor's wall time in milliseconds. */
  jobFinished(checkType: string, outcome: JobOutcomeLabel, durationMs: number): void {
    this.#jobs.inc({ check_type: checkType, outcome });
    this.#jobDuration.observe({ check_type: checkType }, durationMs / 1000);
  }

  /** Counts one claim call and, when it succeeded, the jobs it brought per class. */
  claimed(outcome: ClaimOutcomeLabel, jobs: Record<JobClass, number> = { uptime: 0, main: 0 }): void {
    this.#claims.inc({ outcome });
    for (const [jobClass, count] of Object.entries(jobs)) {
      if (count > 0) this.#claimedJobs.inc({ job_class: jobClass }, count);
    }
  }

  /** Counts one result post attempt. */
  resultPosted(outcome: ResultOutcomeLabel): void {
    this.#results.inc({ outcome });
  }
}
