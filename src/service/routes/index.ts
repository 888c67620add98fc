import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';
import { agentRoutes } from './agent.js';
import { checkSessionRoutes } from './check-sessions.js';
import { checkRoutes } from './checks.js';

/** A route plugin: registers the routes of one resource under the authenticated `/v1` scope. */
export type RoutePlugin = (app: FastifyInstance, ctx: ServiceContext) => Promise<void>;

/** Every `/v1` route plugin, one per resource. Add a resource by adding its plugin here. */
export const ROUTES: readonly RoutePlugin[] = [checkRoutes, checkSessionRoutes, agentRoutes];
