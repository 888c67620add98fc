/**
 * The resource types of the audit log, by the route prefix they live under (docs/teams.md, "Audit log"),
 * longest first where one prefix holds another. A route under none of them gets the type its first path
 * segment names (see {@link resourceOf}), so a route added later is recorded all the same.
 */
const RESOURCE_PREFIXES: readonly (readonly [prefix: string, type: string])[] = [
  ['/v1/checks/:id/agentic-repairs', 'agentic-repair'],
  ['/v1/checks', 'check'],
  ['/v1/check-groups', 'check-group'],
  ['/v1/check-sessions', 'check-session'],
  ['/v1/alert-channels', 'alert-channel'],
  ['/v1/alert-settings', 'alert-settings'],
  ['/v1/status-pages/services', 'status-page-service'],
  ['/v1/status-pages/incidents/:incidentId/incident-updates', 'status-page-incident-update'],
  ['/v1/status-pages/incidents', 'status-page-incident'],
  ['/v1/status-pages/:id/keys', 'status-page-key'],
  ['/v1/status-pages/:id/subscribers', 'status-page-subscriber'],
  ['/v1/status-pages', 'status-page'],
  ['/v1/incidents/:incidentId/updates', 'incident-update'],
  ['/v1/incidents', 'incident'],
  ['/v1/variables', 'variable'],
  ['/v1/client-certificates', 'client-certificate'],
  ['/v1/error-groups', 'error-group'],
  ['/v1/snippets', 'snippet'],
  ['/v1/private-locations/:id/keys', 'private-location-key'],
  ['/v1/private-locations', 'private-location'],
  ['/v1/api-keys', 'api-key'],
  ['/v1/maintenance-windows', 'maintenance-window'],
  ['/v1/dashboards', 'dashboard'],
  ['/v1/triggers/checks', 'check-trigger'],
  ['/v1/triggers/check-groups', 'check-group-trigger'],
  ['/v1/users', 'user'],
  ['/v1/sso', 'sso-settings'],
  ['/next/projects', 'project'],
  ['/next-v2/projects', 'project'],
  ['/next/checkly-storage', 'code-bundle'],
];

/** Static segments that qualify a check's route by its type (`/v1/checks/api/:id`): no action. */
const CHECK_TYPE_SEGMENTS =
  /^(?:icmp|dns|tcp|url|api|browser|multistep|playwright|heartbeat|grpc|ssl|traceroute|agentic)$/;

/** What an entry says was changed: `check.update` of check `…`. */
export type AuditedResource = {
  /** `<resourceType>.<verb>`: create, update, delete, or the route's own action (`check-session.trigger`). */
  action: string;
  resourceType: string;
  /** The resource's id; null for one of a kind (the account's alert settings) or when the answer names none. */
  resourceId: string | null;
  /** Whether the action creates, replaces or deletes the resource's document (then before/after are kept). */
  changesDocument: boolean;
};

/** The verb of a method without an action segment. */
function verbOf(method: string): string {
  switch (method) {
    case 'POST':
      return 'create';
    case 'DELETE':
      return 'delete';
    default:
      return 'update';
  }
}

/** The id an answer gives its resource: `id`, else `key` (variables), else `logicalId` (projects). */
function answerIdOf(answer: unknown): string | null {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return null;
  const doc = answer as Record<string, unknown>;
  for (const field of ['id', 'key', 'logicalId']) {
    const value = doc[field];
    if (typeof value === 'string' || typeof value === 'number') return String(value);
  }
  return null;
}

/**
 * The resource a successful change was made to, from the route's URL pattern (`/v1/checks/api/:id`), its
 * path parameters and its answer: the type by {@link RESOURCE_PREFIXES}; the id from the last path parameter
 * after the prefix, else from the answer (a create); the action from the static segments after the prefix
 * (`/v1/alert-channels/:id/test` → `alert-channel.test`) or else the method (POST create, PUT/PATCH update,
 * DELETE delete).
 */
export function resourceOf(
  method: string,
  routeUrl: string,
  params: Record<string, unknown>,
  answer: unknown,
): AuditedResource {
  const found = RESOURCE_PREFIXES.find(
    ([prefix]) => routeUrl === prefix || routeUrl.startsWith(`${prefix}/`),
  );
  const [prefix, resourceType] = found ?? fallbackOf(routeUrl);
  const rest = routeUrl.slice(prefix.length).split('/').filter(Boolean);
  let id: string | null = null;
  const actions: string[] = [];
  for (const segment of rest) {
    if (segment.startsWith(':')) {
      const value = params[segment.slice(1)];
      id = typeof value === 'string' || typeof value === 'number' ? String(value) : null;
      actions.length = 0;
    } else if (!(resourceType === 'check' && CHECK_TYPE_SEGMENTS.test(segment))) {
      actions.push(segment);
    }
  }
  const changesDocument = actions.length === 0;
  const resourceId = id ?? (changesDocument && method === 'POST' ? answerIdOf(answer) : null);
  const verb = changesDocument ? verbOf(method) : actions.join('.');
  return { action: `${resourceType}.${verb}`, resourceType, resourceId, changesDocument };
}

/** A route under no known prefix: its first segment after the version, singular (`/v1/widgets/:id` → widget). */
function fallbackOf(routeUrl: string): readonly [string, string] {
  const [version = '', first = 'resource'] = routeUrl.split('/').filter(Boolean);
  const type = first.startsWith(':') ? 'resource' : first.replace(/s$/, '');
  return [`/${version}/${first}`, type];
}
