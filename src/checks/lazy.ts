import type { CheckType, Job, RunOutcome } from '../protocol/index.js';
import type { Executor, ExecutorContext } from './executor.js';

/**
 * An executor whose module is imported on its first job, so an idle agent holds
 * only the executors it has used (DNS, TCP and URL code and their libraries stay
 * out of memory on an agent that only pings). A failed import rejects that job's
 * run, which the dispatcher turns into a result with `hasErrors`.
 */
export function lazyExecutor(checkType: CheckType, load: () => Promise<Executor>): Executor {
  let loaded: Promise<Executor> | undefined;
  return {
    checkType,
    async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
      loaded ??= load();
      return (await loaded).run(job, context);
    },
    async close(): Promise<void> {
      if (loaded) await (await loaded.catch(() => null))?.close();
    },
  };
}
