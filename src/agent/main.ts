import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DestinationStream } from 'pino';
import type { Executor } from '../checks/executor.js';
import type { CheckType } from '../protocol/index.js';
import { hasCode } from '../common/errors.js';
import { PACKAGE_ROOT } from '../common/paths.js';
import { userCodeIsolation } from '../common/run-users.js';
import { createLogger, type Logger } from '../common/logger.js';
import { type ModelEndpoint, modelEndpointFromEnv } from '../checks/agentic/model-client.js';
import { registeredExecutors } from '../checks/registry.js';
import { guardInspectorSignal } from '../sandbox/inspector-guard.js';
import type { BrowserPool } from '../browser/pool.js';
import type { BrowserRunner } from '../browser/runner-process.js';
import { Agent, type AgentBrowsers } from './agent.js';
import type { UserCodeStatus } from './health-server.js';
import { listenError } from '../common/ports.js';
import { type AgentConfig, parseAgentConfig, profileRuns, redactAgentConfig } from './config.js';

/** Exit codes of `outpost agent`. */
export const AGENT_EXIT_CODES = {
  /** Stopped cleanly (first SIGTERM/SIGINT, jobs drained). */
  ok: 0,
  /** Fatal: the service refused the key (401/403) or the protocol (400), the health port could not be bound, or an uncaught error. */
  fatal: 1,
  /** Bad configuration: the message went to stderr. */
  config: 2,
  /** Second SIGINT: exited at once. */
  sigint: 130,
  /** Second SIGTERM: exited at once. */
  sigterm: 143,
} as const;

/** How long an uncaught error's report may take before the process exits, milliseconds. */
const FATAL_REPORT_WAIT_MS = 2000;

/** Options of {@link runAgent}. */
export type RunAgentOptions = {
  /**
   * Executors by check type; default those of the executor registry (src/checks/registry.ts) that
   * the profile runs, each loaded on its first job.
   */
  executors?: ReadonlyMap<CheckType, Executor>;
  /** Where JSON logs go; default stdout. */
  logDestination?: DestinationStream;
  /** Where a configuration error is written; default process.stderr. */
  stderr?: { write(text: string): unknown };
  /**
   * Install SIGTERM/SIGINT, uncaughtException and unhandledRejection handlers; default true.
   * `outpost up`, which runs the service in the same process, may own them instead.
   */
  handleProcessEvents?: boolean;
  /** Address the health server binds; default all interfaces. */
  healthHost?: string;
};

/**
 * `outpost agent`: parses the environment, logs the configuration once (redacted),
 * runs the agent until it stops, and returns the exit code for the CLI to use
 * ({@link AGENT_EXIT_CODES}). The first SIGTERM/SIGINT drains (`Agent.stop()`) and
 * returns 0; a second one calls `process.exit(143 | 130)` at once; an uncaught error
 * is logged, reported, and exits 1 — these three exit the process themselves because
 * the agent's state can no longer be trusted to unwind.
 */
export async function runAgent(env: NodeJS.ProcessEnv, options: RunAgentOptions = {}): Promise<number> {
  // The agent runs user scripts: SIGUSR1 must never open its inspector (src/sandbox/inspector-guard.ts).
  guardInspectorSignal();
  let config: AgentConfig;
  let agenticModel: ModelEndpoint | null;
  try {
    config = parseAgentConfig(env);
    agenticModel = modelEndpointFromEnv(env);
    // Nothing the agent starts inherits the key (its children get explicit environments; this is the net).
    delete env.API_KEY;
    delete env.API_KEY_FILE;
    delete env.OUTPOST_AGENT_MODEL_API_KEY;
    delete env.OUTPOST_AGENT_MODEL_API_KEY_FILE;
  } catch (err) {
    if (!hasCode(err, 'OUTPOST_ERR_CONFIG')) throw err;
    (options.stderr ?? process.stderr).write(`outpost agent: ${err.message}\n`);
    return AGENT_EXIT_CODES.config;
  }

  const logger = createLogger({
    level: config.logLevel,
    name: 'outpost-agent',
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  logger.info(
    {
      config: redactAgentConfig(config),
      agenticModel:
        agenticModel === null
          ? null
          : { url: agenticModel.baseUrl, model: agenticModel.model, apiKey: agenticModel.apiKey !== null },
    },
    'agent configuration',
  );

  const userCode = config.profile === 'full' ? userCodeStatus(logger) : undefined;
  const browsers =
    options.executors === undefined && userCode?.isolated === true
      ? await startBrowserPool(config, logger)
      : undefined;
  const browserPool = browsers?.pool;
  const executors =
    options.executors ??
    registeredExecutors(
      // Browser and multi-step checks only on an agent with a browser (full profile, user code kept
      // apart, Chromium installed).
      (t) => profileRuns(config.profile, t) && (browserPool !== undefined || !BROWSER_TYPES.has(t)),
      {
        logger,
        useOsDnsResolver: config.useOsDnsResolver,
        agenticModel,
        ...(browserPool ? { browserPool } : {}),
        ...(userCode?.isolated === false ? { userCodeRefusal: userCode.reason } : {}),
      },
    );

  const agent = new Agent({
    config,
    executors,
    logger,
    runtimes: config.profile === 'full' ? installedRuntimes() : [],
    ...(browsers ? { browsers: browsers.agent } : {}),
    ...(userCode ? { userCode } : {}),
    ...(options.healthHost !== undefined ? { healthHost: options.healthHost } : {}),
  });
  const removeHandlers =
    options.handleProcessEvents === false ? () => {} : installProcessHandlers(agent, logger);
  try {
    try {
      await agent.start();
    } catch (err) {
      logger.fatal({ err }, 'agent could not start');
      const line = isListenError(err)
        ? listenError('AGENT_HEALTH_PORT', config.healthPort, options.healthHost ?? config.healthHost, err)
            .message
        : `the agent could not start: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
      (options.stderr ?? process.stderr).write(`outpost agent: ${line}\n`);
      return AGENT_EXIT_CODES.fatal;
    }
    try {
      await agent.done;
      return AGENT_EXIT_CODES.ok;
    } catch (err) {
      logger.fatal({ err }, 'agent stopped on a fatal error');
      return AGENT_EXIT_CODES.fatal;
    }
  } finally {
    removeHandlers();
    logger.flush();
  }
}

/**
 * Whether this agent can run user code apart from itself (src/common/run-users.ts), said once in
 * the log: where it cannot, browser and multi-step checks and check suites are not claimed and an
 * API check's setup or teardown script fails its run with the reason; nothing runs as the agent.
 */
function userCodeStatus(logger: Logger): UserCodeStatus {
  const isolation = userCodeIsolation();
  if (isolation.available) {
    logger.info({ mode: isolation.mode }, 'user code runs as run users of its own, apart from the agent');
    return { isolated: true, mode: isolation.mode };
  }
  logger.error(
    { reason: isolation.reason },
    'user code is refused: API scripts, browser and multi-step checks and check suites do not run on this agent',
  );
  return { isolated: false, reason: isolation.reason };
}

/** Check types whose executors need the browser pool. */
const BROWSER_TYPES: ReadonlySet<CheckType> = new Set<CheckType>([
  'BROWSER',
  'MULTI_STEP',
  'PLAYWRIGHT',
  'AGENTIC',
]);

/** How often the claim loop's view of the browser pool's memory headroom is refreshed, ms. */
const CAPACITY_REFRESH_MS = 1_000;

/** Runtimes whose Playwright can drive a browser: the installed ones with playwright-core. */
function browserRuntimes(): string[] {
  return installedRuntimes().filter((id) =>
    existsSync(join(PACKAGE_ROOT, 'runtimes', id, 'node_modules', 'playwright-core', 'package.json')),
  );
}

/**
 * The agent's browser pool and what the agent asks of it, or undefined when this agent runs no
 * browser checks: the uptime profile, no Chromium at `CHROMIUM_PATH` or no runtime with Playwright
 * (said in the log). Browser check types are claimed only for runtimes that passed their start-up
 * compatibility check, while a slot is free and memory is not short.
 */
async function startBrowserPool(
  config: AgentConfig,
  logger: Logger,
): Promise<{ pool: BrowserPool<BrowserRunner>; agent: AgentBrowsers } | undefined> {
  if (config.profile !== 'full') return undefined;
  const log = logger.child({ component: 'browser-pool' });
  if (!existsSync(config.chromiumPath)) {
    log.warn(
      { chromiumPath: config.chromiumPath },
      'no Chromium at CHROMIUM_PATH: browser and multi-step checks are not claimed (apt-get install chromium)',
    );
    return undefined;
  }
  const runtimes = browserRuntimes();
  if (runtimes.length === 0) {
    log.warn('no runtime with Playwright is installed: browser and multi-step checks are not claimed');
    return undefined;
  }
  const [{ BrowserPool }, { BrowserRunner }] = await Promise.all([
    import('../browser/pool.js'),
    import('../browser/runner-process.js'),
  ]);
  const pool = new BrowserPool<BrowserRunner>({
    createRunner: (options) => BrowserRunner.spawn(options),
    chromiumPath: config.chromiumPath,
    browserConcurrency: config.browserConcurrency,
    memoryPerCheckMiB: config.browserMemoryPerCheckMiB,
    logger: log,
  });
  const passed = new Set<string>();
  // Memory headroom is read asynchronously: once a second, so the claim loop can ask synchronously.
  let memoryAllows = false;
  const refresh = async () => {
    const answers = await Promise.all([...passed].map((id) => pool.hasCapacity(id).catch(() => false)));
    memoryAllows = answers.some(Boolean);
  };
  const timer = setInterval(() => void refresh(), CAPACITY_REFRESH_MS);
  timer.unref();
  const agent: AgentBrowsers = {
    async start() {
      for (const runtimeId of runtimes) {
        const check = await pool.checkRuntime(runtimeId);
        if (check.ok) {
          passed.add(runtimeId);
          await refresh();
          log.info(
            {
              runtimeId,
              browserVersion: check.browserVersion,
              playwrightVersion: check.playwrightVersion,
              durationMs: Math.round(check.durationMs),
            },
            'browser runtime passed its compatibility check',
          );
        } else {
          log.error(
            { runtimeId, reason: check.reason },
            'browser runtime unavailable: its checks are not claimed',
          );
        }
      }
    },
    canAdmit() {
      const status = pool.status();
      if (!memoryAllows || status.waitingForMemory) return false;
      if (status.running + status.waiting >= status.concurrency) return false;
      return status.runtimes.some((r) => r.available && passed.has(r.runtimeId));
    },
    status: () => pool.status(),
    close: () => {
      clearInterval(timer);
      return pool.close();
    },
  };
  return { pool, agent };
}

/** Runtime ids under runtimes/ whose dependencies are installed (what the sandbox can run scripts in). */
function installedRuntimes(): string[] {
  const dir = join(PACKAGE_ROOT, 'runtimes');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((id) => existsSync(join(dir, id, 'node_modules')))
    .sort();
}

/** True for an error of binding a port (the health server's listen). */
function isListenError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    (err as { syscall?: unknown } | null)?.syscall === 'listen' || code === 'EADDRINUSE' || code === 'EACCES'
  );
}

function installProcessHandlers(agent: Agent, logger: Logger): () => void {
  let signals = 0;
  let exiting = false;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals === 1) {
      logger.info({ signal }, 'shutdown requested; draining running jobs (signal again to exit at once)');
      void agent.stop();
      return;
    }
    logger.warn({ signal }, 'second signal; exiting at once');
    logger.flush();
    process.exit(signal === 'SIGINT' ? AGENT_EXIT_CODES.sigint : AGENT_EXIT_CODES.sigterm);
  };
  const onUncaught = (err: unknown, origin: string) => {
    logger.fatal({ err, origin }, 'uncaught error; exiting');
    if (exiting) return;
    exiting = true;
    const waited = new Promise<void>((resolve) => setTimeout(resolve, FATAL_REPORT_WAIT_MS));
    void Promise.race([agent.reportError(err), waited]).finally(() => {
      logger.flush();
      process.exit(AGENT_EXIT_CODES.fatal);
    });
  };
  const onRejection = (reason: unknown) => onUncaught(reason, 'unhandledRejection');
  // Started with an IPC channel (by `outpost up`): its closing means the parent, and the service
  // running in it, is gone (even SIGKILLed), so stop at once: no result could be posted anyway.
  const onParentGone = () => {
    logger.warn('parent process gone; stopping and aborting running jobs');
    void agent.abort();
  };
  // process.send exists when the agent was started with a channel, closed or not: a parent gone before
  // this handler was installed (while the agent loaded) must stop it too.
  if (typeof process.send === 'function') {
    if (process.connected) {
      process.channel?.unref();
      process.once('disconnect', onParentGone);
    } else {
      queueMicrotask(onParentGone);
    }
  }
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('disconnect', onParentGone);
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onRejection);
  };
}
