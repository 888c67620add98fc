import type { Logger } from '../../common/logger.js';
import type { ServiceContext } from '../context.js';

/** Options of HeartbeatMonitor. Times in ms. */
export type HeartbeatMonitorOptions = {
  /** The clock (epoch ms); default Date.now. Tests move it to make deadlines pass. */
  now?: () => number;
  /** The sweeper's safety poll; default 1 000. */
  pollMs?: number;
  /** Whether `start` starts the sweeper (default true). */
  sweep?: boolean;
};

/** Heartbeat monitors: pings, deadlines and the sweeper that finds late heartbeats. */
export class HeartbeatMonitor {
  readonly #context: ServiceContext;
  readonly #log: Logger;
  readonly #options: HeartbeatMonitorOptions;

  constructor(context: ServiceContext, options: HeartbeatMonitorOptions & { appUrl: string; log: Logger }) {
    this.#context = context;
    this.#log = options.log;
    this.#options = options;
  }

  /** Moves deadlines that passed while the service was down, then starts the sweeper. */
  async start(): Promise<void> {}

  /** Stops the sweeper; waits for a sweep under way. */
  async stop(): Promise<void> {}
}
