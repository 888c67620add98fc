import type { Logger } from '../common/logger.js';
import type { CheckType, Job, RunOutcome } from '../protocol/index.js';
import type { ModelEndpoint } from './agentic/model-client.js';
import type { BrowserPoolPort } from './browser/index.js';
import type { Executor, ExecutorContext } from './executor.js';

/** What the agent hands the executors it builds. */
export type ExecutorDependencies = {
  /** The agent's logger; executors that log outside a job's run take a child `{ component }`. */
  logger: Logger;
  /** Resolve with the OS resolver instead of querying DNS (`USE_OS_DNS_RESOLVER`). */
  useOsDnsResolver: boolean;
  /**
   * The agent's browser pool (src/browser/pool.ts), which browser and multi-step checks run in;
   * absent on an agent without a browser (their jobs then fail with a reason).
   */
  browserPool?: BrowserPoolPort;
  /**
   * Why this agent runs no user code (it cannot run it apart from itself: src/common/run-users.ts);
   * absent when it can. Browser checks and suites then fail with this reason.
   */
  userCodeRefusal?: string;
  /**
   * The model endpoint AGENTIC checks write and repair scripts with (`OUTPOST_AGENT_MODEL_URL`, …);
   * null or absent: none (runs that need it fail with a reason, replays still run).
   */
  agenticModel?: ModelEndpoint | null;
};

/** One check type the agent runs: how its executor is built, and whether its failures are diagnosed. */
export type ExecutorEntry = {
  /** Imports the executor's module and builds the executor; called on the first job of the type. */
  load: (dependencies: ExecutorDependencies) => Promise<Executor>;
  /**
   * A run that FAILED on a network error gets a route trace and a packet capture of its final
   * connection (src/agent/network-diagnostics.ts): the check types whose results carry one.
   */
  networkDiagnostics: boolean;
};

/**
 * The agent's executor registry, its check-type registry (docs/architecture.md, "Adding a check type"),
 * not to be confused with the service's (src/service, create routes and job recipes): each check type
 * the agent runs, in the order it advertises them, and how its executor is built. Which job class
 * queues a type, and so which agent profile claims it, is the protocol's (`jobClassOf`: ICMP, DNS,
 * TCP and URL are uptime jobs, every other type a main job). Adding a check type is one entry here
 * (and its executor under src/checks/<type>/).
 */
export const EXECUTOR_REGISTRY = {
  ICMP: {
    load: async ({ logger }) =>
      (await import('./icmp/index.js')).createIcmpExecutor({ log: logger.child({ component: 'icmp' }) }),
    networkDiagnostics: false,
  },
  DNS: {
    load: async ({ logger }) =>
      (await import('./dns/index.js')).createDnsExecutor({ log: logger.child({ component: 'dns' }) }),
    networkDiagnostics: false,
  },
  TCP: {
    load: async ({ useOsDnsResolver }) =>
      (await import('./tcp/index.js')).createTcpExecutor({ useOsDnsResolver }),
    networkDiagnostics: false,
  },
  URL: {
    load: async ({ useOsDnsResolver }) =>
      (await import('./url/index.js')).createUrlExecutor({ useOsDnsResolver }),
    networkDiagnostics: true,
  },
  API: {
    load: async ({ useOsDnsResolver, logger }) => {
      const { ScriptSandbox } = await import('../sandbox/sandbox.js');
      return (await import('./api/index.js')).createApiExecutor({
        useOsDnsResolver,
        scripts: new ScriptSandbox({ logger: logger.child({ component: 'script-sandbox' }) }),
      });
    },
    networkDiagnostics: true,
  },
  BROWSER: {
    load: async (dependencies) => loadBrowserExecutor('BROWSER', dependencies),
    networkDiagnostics: false,
  },
  MULTI_STEP: {
    load: async (dependencies) => loadBrowserExecutor('MULTI_STEP', dependencies),
    networkDiagnostics: false,
  },
  GRPC: {
    load: async ({ useOsDnsResolver }) =>
      (await import('./grpc/index.js')).createGrpcExecutor({ useOsDnsResolver }),
    networkDiagnostics: false,
  },
  PLAYWRIGHT: {
    load: async ({ browserPool, userCodeRefusal }) => {
      if (browserPool === undefined)
        throw new Error(userCodeRefusal ?? 'this agent has no browser: it runs no Playwright check suites');
      return new (await import('./browser/suite-executor.js')).SuiteExecutor({ pool: browserPool });
    },
    networkDiagnostics: false,
  },
  SSL: {
    load: async ({ useOsDnsResolver }) =>
      (await import('./ssl/index.js')).createSslExecutor({ useOsDnsResolver }),
    networkDiagnostics: false,
  },
  TRACEROUTE: {
    load: async ({ useOsDnsResolver }) =>
      (await import('./traceroute/index.js')).createTracerouteExecutor({ useOsDnsResolver }),
    networkDiagnostics: false,
  },
  AGENTIC: {
    load: async ({ browserPool, userCodeRefusal, agenticModel }) => {
      if (browserPool === undefined)
        throw new Error(userCodeRefusal ?? 'this agent has no browser: it runs no agentic checks');
      return (await import('./agentic/index.js')).createAgenticExecutor({
        pool: browserPool,
        model: agenticModel ?? null,
      });
    },
    networkDiagnostics: false,
  },
} as const satisfies Partial<Record<CheckType, ExecutorEntry>>;

/**
 * The executor of browser or multi-step checks, on the agent's browser pool.
 * @throws Error when the agent has no browser pool (the job fails with that reason).
 */
async function loadBrowserExecutor(
  checkType: 'BROWSER' | 'MULTI_STEP',
  { browserPool, userCodeRefusal }: ExecutorDependencies,
): Promise<Executor> {
  if (browserPool === undefined)
    throw new Error(userCodeRefusal ?? 'this agent has no browser: it runs no browser checks');
  return (await import('./browser/index.js')).createBrowserExecutor({ checkType, pool: browserPool });
}

/** A check type the agent has an executor for. */
export type AgentCheckType = keyof typeof EXECUTOR_REGISTRY;

/** The registry's entry of `checkType`, or undefined for a type the agent does not run. */
export function executorEntry(checkType: string): ExecutorEntry | undefined {
  return Object.hasOwn(EXECUTOR_REGISTRY, checkType)
    ? EXECUTOR_REGISTRY[checkType as AgentCheckType]
    : undefined;
}

/**
 * The executors of the registered check types that `include` accepts, in registry order, each
 * imported and built on its first job (see {@link lazyExecutor}).
 */
export function registeredExecutors(
  include: (checkType: AgentCheckType) => boolean,
  dependencies: ExecutorDependencies,
): Map<CheckType, Executor> {
  const types = (Object.keys(EXECUTOR_REGISTRY) as AgentCheckType[]).filter(include);
  return new Map(
    types.map((t) => [t, lazyExecutor(t, () => EXECUTOR_REGISTRY[t].load(dependencies))] as const),
  );
}

/**
 * An executor whose module is imported on its first job, so an idle agent holds
 * only the executors it has used (DNS, TCP and URL code and their libraries stay
 * out of memory on an agent that only pings). A failed import rejects that job's
 * run, which the dispatcher turns into a result with `hasErrors`.
 */
function lazyExecutor(checkType: CheckType, load: () => Promise<Executor>): Executor {
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
