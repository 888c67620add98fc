import type { ServiceContext } from './context.js';
import type { AuthEvent } from './platform/http/auth-events.js';
import type { ServiceApp } from './platform/http/service-app.js';
import type { RetentionTask } from './platform/store/retention.js';
import type { NamedResultHook } from './runs/results/outbox.js';
import type { ResultRecorder } from './runs/results/recorders.js';

/**
 * A route plugin: registers one feature's routes on the scope it is given (the authenticated `/v1`
 * scope for {@link ServiceModule.routes}, the keyless one for {@link ServiceModule.publicRoutes}).
 */
export type RoutePlugin = (app: ServiceApp, ctx: ServiceContext) => Promise<void>;

/** What a module's retention tasks may use besides the store: the artifact files. */
export type RetentionNeeds = Pick<ServiceContext, 'artifacts'>;

/**
 * What a module adds to every request rather than to its own routes (the audit log): given once by
 * `build()`, before any route is registered.
 */
export type RequestHooks = {
  /**
   * Adds Fastify hooks (`onSend`, `onResponse`, …) to the authenticated `/v1` scope, after the auth hook and
   * before any module's routes, so they run for every `/v1` route; `request.principal` and
   * `request.routeOptions.config.permission` are set by the time a hook after `onRequest` runs. A hook must
   * not change the answer, and work it does after the answer must not fail or slow the request.
   */
  v1?(scope: ServiceApp): void;
  /** Told of each sign-in, failed sign-in and sign-out of the web app, once answered (platform/http/auth-events.ts). */
  authEvent?(event: AuthEvent): void;
  /** Resolves once the work these hooks took on after the answers so far is done (the audit log's writes). */
  settled?(): Promise<void>;
};

/** One plugin registering `plugins` in order: a module's several route files as its one `routes`. */
export function routesOf(...plugins: RoutePlugin[]): RoutePlugin {
  return async (app, ctx) => {
    for (const plugin of plugins) await plugin(app, ctx);
  };
}

/**
 * One feature of the service (docs/architecture.md, "Modules"): a folder that owns all its routes, schemas,
 * queries and retention, and plugs into `build()` through this contract. `build()` loops over `MODULES`
 * (modules.ts) and knows no feature by name.
 *
 * Workers (the queue, the result outbox, alert delivery, heartbeat sweeps, custom domains, retention) are
 * not part of the contract: other modules' routes wake them, so each is built once by `createContext`
 * (context.ts) and named in the {@link ServiceContext}.
 */
export interface ServiceModule {
  /** The module's name: its folder's (`checks`, `status-pages`, …). */
  readonly name: string;
  /** Routes under `/v1`, behind the API key or a web-app session (platform/http/auth.ts). */
  readonly routes?: RoutePlugin;
  /**
   * Routes anyone may call, without a key (heartbeat pings, public status pages). A public route
   * authenticates nothing for the caller: whatever token its URL carries (a ping's token, a page's slug)
   * it checks itself, and it never answers account data beyond what that token opens.
   */
  readonly publicRoutes?: RoutePlugin;
  /**
   * Hooks on every `/v1` request and on the web app's sign-ins ({@link RequestHooks}); called once by
   * `build()` with the complete context.
   */
  requestHooks?(ctx: ServiceContext): RequestHooks;
  /**
   * Consumers of each stored result that run in the result's own transaction (alerting, check statuses):
   * what they write commits with the result or not at all (docs/alerting.md, "Exactly once"). Called once
   * by `createContext`, before the queue is built; `ctx` is complete by the time a recorder runs.
   */
  recorders?(ctx: ServiceContext): ResultRecorder[];
  /**
   * Consumers run after the result's commit, from the result outbox with retries (error groups). Each
   * name is written into outbox rows: keep it the same across releases.
   */
  hooks?(ctx: ServiceContext): NamedResultHook[];
  /**
   * Deletions of the module's old rows, run by the retention worker in module order (docs/architecture.md,
   * "Retention"); given only what retention may touch besides the store.
   */
  retention?(needs: RetentionNeeds): readonly RetentionTask[];
}
