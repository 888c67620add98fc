import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';
import { agentRoutes } from './agent.js';
import { agentsRoutes } from './agents.js';
import { artifactRoutes } from './artifacts.js';
import { analyticsRoutes } from './analytics.js';
import { checkResultRoutes } from './check-results.js';
import { checkSessionRoutes } from './check-sessions.js';
import { checkRoutes } from './checks.js';
import { alertChannelRoutes } from './alert-channels.js';
import { checkGroupRoutes } from './check-groups.js';
import { privateLocationRoutes } from './private-locations.js';
import { snippetRoutes } from './snippets.js';
import { clientCertificateRoutes } from './client-certificates.js';
import { errorGroupRoutes } from './error-groups.js';
import { variableRoutes } from './variables.js';
import { incidentRoutes } from './incidents.js';
import { runtimeRoutes } from './runtimes.js';
import { statusPageRoutes } from './status-pages.js';

/** A route plugin: registers the routes of one resource under the authenticated `/v1` scope. */
export type RoutePlugin = (app: FastifyInstance, ctx: ServiceContext) => Promise<void>;

/** Every `/v1` route plugin, one per resource. Add a resource by adding its plugin here. */
export const ROUTES: readonly RoutePlugin[] = [
  checkRoutes,
  checkSessionRoutes,
  agentRoutes,
  artifactRoutes,
  variableRoutes,
  clientCertificateRoutes,
  errorGroupRoutes,
  statusPageRoutes,
  incidentRoutes,
  runtimeRoutes,
  checkGroupRoutes,
  alertChannelRoutes,
  snippetRoutes,
  privateLocationRoutes,
  analyticsRoutes,
  checkResultRoutes,
  agentsRoutes,
];
