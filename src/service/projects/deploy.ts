import { HttpError } from '../platform/http/errors.js';
import type { ServiceErrorCode } from '../platform/http/error-codes.js';
import { SERVICE_ERROR_CODES } from '../platform/http/error-codes.js';
import type { DeployChange, DeployResource } from './schema.js';
import type { ProjectResourceRow } from './store.js';

/** An id the API gave a resource: an integer (groups, alert channels, …) or a string (checks, pages, …). */
export type PhysicalId = string | number;

/** One call of the service's own API: what {@link Api} sends and what it answers. */
export type ApiCall = { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; url: string; body?: unknown };
/** The service's own API, called in-process with the deploying request's credentials. */
export type Api = (call: ApiCall) => Promise<{ statusCode: number; body: unknown }>;

/** How one construct type of the CLI maps onto the API's routes. */
type Kind = {
  /** Where to create one: POST to this path. */
  create(payload: Record<string, unknown>): string;
  /** Where to update the resource `id`: PUT to this path. */
  update(id: PhysicalId, payload: Record<string, unknown>): string;
  /** Where to delete the resource `id`: DELETE this path. */
  remove(id: PhysicalId): string;
  /** The field of a create's answer holding the id its paths take; default `id`. */
  idField?: string;
};

/** The API path of each check type the CLI sends (`checkType`). */
const CHECK_PATHS: Record<string, string> = {
  API: 'api',
  BROWSER: 'browser',
  URL: 'url',
  TCP: 'tcp',
  DNS: 'dns',
  ICMP: 'icmp',
  HEARTBEAT: 'heartbeat',
  MULTI_STEP: 'multistep',
  PLAYWRIGHT: 'playwright',
};

/** The API path of a check's payload. @throws HttpError 400 naming an unknown `checkType`. */
function checkPath(payload: Record<string, unknown>): string {
  const path = CHECK_PATHS[String(payload.checkType)];
  if (!path) {
    throw new HttpError(
      'OUTPOST_ERR_VALIDATION',
      `checkType ${JSON.stringify(payload.checkType)} is not one Outpost runs (${Object.keys(CHECK_PATHS).join(', ')})`,
      { field: 'checkType', rule: 'enum' },
    );
  }
  return path;
}

/** A kind whose resources live at `base` and `base/{id}`. */
const at = (base: string): Kind => ({
  create: () => base,
  update: (id) => `${base}/${encodeURIComponent(String(id))}`,
  remove: (id) => `${base}/${encodeURIComponent(String(id))}`,
});

/**
 * The construct types a deploy applies, in the order they are created and updated (a resource comes after
 * those it names); deletions go in the reverse order. `alert-channel-subscription` is not a route: each is
 * folded into its check's or group's `alertChannelSubscriptions`.
 */
const KINDS: ReadonlyMap<string, Kind> = new Map<string, Kind>([
  ['status-page-service', at('/v1/status-pages/services')],
  ['alert-channel', at('/v1/alert-channels')],
  ['private-location', at('/v1/private-locations')],
  ['check-group', at('/v1/check-groups')],
  [
    'check',
    {
      // Subscribed to the channels its project names only, not to every channel of the account.
      create: (payload) => `/v1/checks/${checkPath(payload)}?autoAssignAlerts=false`,
      update: (id, payload) => `/v1/checks/${checkPath(payload)}/${encodeURIComponent(String(id))}`,
      remove: (id) => `/v1/checks/${encodeURIComponent(String(id))}`,
    },
  ],
  ['status-page', at('/v1/status-pages')],
  ['maintenance-window', at('/v1/maintenance-windows')],
  // A dashboard's paths take its `dashboardId`, not its `id`.
  ['dashboard', { ...at('/v1/dashboards'), idField: 'dashboardId' }],
]);

/** The construct type of a subscription of a check or group to an alert channel. */
const SUBSCRIPTION = 'alert-channel-subscription';
/** The construct types placing a check, or a group's checks, on a private location. */
const CHECK_ASSIGNMENT = 'private-location-check-assignment';
const GROUP_ASSIGNMENT = 'private-location-group-assignment';
/** Constructs that are no route of their own: each is folded into its check or group. */
const FOLDED: readonly string[] = [SUBSCRIPTION, CHECK_ASSIGNMENT, GROUP_ASSIGNMENT];

/** The construct types a deploy takes, in the order they are applied. */
export const DEPLOYABLE_TYPES: readonly string[] = [...KINDS.keys(), ...FOLDED];

/** A physical id as stored (text) back in the API's type: digits are an integer id. */
export function physicalIdOf(text: string): PhysicalId {
  return /^[0-9]{1,15}$/.test(text) ? Number(text) : text;
}

/** `{"ref": "<logicalId>"}`: how a payload names another resource of the deploy. */
function refOf(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  const ref = (value as { ref?: unknown }).ref;
  return keys.length === 1 && typeof ref === 'string' ? ref : undefined;
}

/** The first `{"ref"}` in `value` naming no logical id of `known`, with its path; undefined when none. */
function danglingRef(
  value: unknown,
  path: string,
  known: ReadonlySet<string>,
): { path: string; ref: string } | undefined {
  const ref = refOf(value);
  if (ref !== undefined) return known.has(ref) ? undefined : { path, ref };
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = danglingRef(item, `${path}[${i}]`, known);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const found = danglingRef(item, path ? `${path}.${key}` : key, known);
      if (found) return found;
    }
  }
  return undefined;
}

/** A failed deploy: the resource's logical id and type, and what its route said (its field, when it named one). */
function resourceError(
  resource: Pick<DeployResource, 'logicalId' | 'type'>,
  message: string,
  attributes: Record<string, unknown> = {},
  code: ServiceErrorCode = 'OUTPOST_ERR_VALIDATION',
): HttpError {
  return new HttpError(code, `resource ${resource.type} "${resource.logicalId}": ${message}`, {
    ...attributes,
    logicalId: resource.logicalId,
    resourceType: resource.type,
  });
}

/** Key of a resource in a project's map. */
const keyOf = (type: string, logicalId: string) => `${type}\u0000${logicalId}`;

/** What a deploy will do: the changes in the order applied, before any is applied. */
export type DeployPlan = {
  /** Resources to create or update, in {@link KINDS} order (subscriptions last: they are folded in). */
  upserts: { resource: DeployResource; existing: PhysicalId | undefined }[];
  /** Resources of the previous deploy that left the project, in reverse {@link KINDS} order. */
  deletes: ProjectResourceRow[];
};

/**
 * Plans a deploy of `resources` over the project's current map `current` (docs/api.md, "Projects (monitoring as
 * code)"): each member resource is keyed by (type, logical id); one in the map is updated, one not in it is
 * created, and one of the map not in `resources` is deleted. A resource that is not a member is only a name
 * for an existing one (its `physicalId`): never created, updated or deleted.
 * @throws HttpError 400 naming the first resource whose construct type Outpost lacks, or a logical id used twice.
 */
export function planDeploy(
  resources: readonly DeployResource[],
  current: readonly ProjectResourceRow[],
): DeployPlan {
  const seen = new Set<string>();
  for (const resource of resources) {
    if (!FOLDED.includes(resource.type) && !KINDS.has(resource.type)) {
      throw resourceError(
        resource,
        `construct type "${resource.type}" is not one Outpost deploys (${DEPLOYABLE_TYPES.join(', ')})`,
        { field: 'type', rule: 'enum' },
      );
    }
    const key = keyOf(resource.type, resource.logicalId);
    if (seen.has(key)) throw resourceError(resource, 'the logical id is used twice', { field: 'logicalId' });
    seen.add(key);
  }
  const known = new Set(resources.map((r) => r.logicalId));
  for (const resource of resources) {
    const dangling = danglingRef(resource.payload, '', known);
    if (dangling) {
      throw resourceError(
        resource,
        `${dangling.path} names "${dangling.ref}", which the project does not define`,
        {
          field: dangling.path,
          rule: 'ref',
        },
      );
    }
  }
  const byKey = new Map(current.map((row) => [keyOf(row.type, row.logical_id), row]));
  const order = (type: string) => DEPLOYABLE_TYPES.indexOf(type);
  const members = resources.filter((r) => r.member !== false);
  const upserts = [...members]
    .sort((a, b) => order(a.type) - order(b.type))
    .map((resource) => {
      const row = byKey.get(keyOf(resource.type, resource.logicalId));
      return { resource, existing: row ? physicalIdOf(row.physical_id) : undefined };
    });
  const kept = new Set(members.map((r) => keyOf(r.type, r.logicalId)));
  const deletes = current
    .filter((row) => !kept.has(keyOf(row.type, row.logical_id)))
    .sort((a, b) => order(b.type) - order(a.type));
  return { upserts, deletes };
}

/** The changes of a plan as the CLI prints them (`--preview`), before anything is applied. */
export function previewOf(plan: DeployPlan): DeployChange[] {
  return [
    ...plan.upserts.map(({ resource, existing }) => ({
      type: resource.type,
      logicalId: resource.logicalId,
      physicalId: existing ?? null,
      action: existing === undefined ? ('CREATE' as const) : ('UPDATE' as const),
    })),
    ...plan.deletes.map((row) => ({
      type: row.type,
      logicalId: row.logical_id,
      physicalId: physicalIdOf(row.physical_id),
      action: 'DELETE' as const,
    })),
  ];
}

/** The id in a create's answer. @throws HttpError 500 when the answer has none. */
function idIn(body: unknown, resource: DeployResource, field = 'id'): PhysicalId {
  const id = (body as Record<string, unknown> | null)?.[field];
  if (typeof id === 'string' || typeof id === 'number') return id;
  throw resourceError(resource, 'the API answered no id', {}, 'OUTPOST_ERR_INTERNAL' as ServiceErrorCode);
}

/** An answer of the API that is not a success, as the deploy's error naming the resource. */
function failedCall(resource: DeployResource, statusCode: number, body: unknown): HttpError {
  const answer = (body ?? {}) as { message?: unknown; attributes?: Record<string, unknown> };
  const code = answer.attributes?.code;
  const known =
    typeof code === 'string' && code in SERVICE_ERROR_CODES ? (code as ServiceErrorCode) : undefined;
  const message = typeof answer.message === 'string' ? answer.message : `the API answered ${statusCode}`;
  return resourceError(resource, message, answer.attributes ?? {}, known ?? 'OUTPOST_ERR_VALIDATION');
}

/** Undo steps of an applied change, run newest first when a later one fails. */
type Undo = () => Promise<void>;

/**
 * Applies `plan` through `api` (the service's own routes, so each resource passes the same validation and side
 * effects as when a client sends it): creates and updates in dependency order, resolving each `{"ref"}` to the
 * id of the resource it names, folds subscriptions into their check's or group's `alertChannelSubscriptions`,
 * then deletes what left the project. All or nothing: when a call fails, the resources this deploy created are
 * deleted again, those it updated are put back as they were read before (a best effort, logged through
 * `onUndoError`), and nothing was deleted yet.
 * @returns the changes applied and the project's new resource map.
 * @throws HttpError naming the failing resource's logical id and, when its route named one, the field.
 */
export async function applyDeploy(
  plan: DeployPlan,
  allResources: readonly DeployResource[],
  api: Api,
  onUndoError: (err: unknown) => void,
): Promise<{ diff: DeployChange[]; map: ProjectResourceRow[] }> {
  const ids = new Map<string, PhysicalId>();
  for (const resource of allResources) {
    if (resource.member === false && resource.physicalId !== undefined && resource.physicalId !== null) {
      ids.set(resource.logicalId, resource.physicalId);
    }
  }
  const subscriptions = plan.upserts.filter(({ resource }) => resource.type === SUBSCRIPTION);
  const assignments = plan.upserts.filter(
    ({ resource }) => resource.type === CHECK_ASSIGNMENT || resource.type === GROUP_ASSIGNMENT,
  );
  const folded = plan.upserts.filter(({ resource }) => FOLDED.includes(resource.type));
  // The slug of each private location a check or group may be assigned to (the routes take slugs).
  const slugs = new Map<string, string>();
  for (const resource of allResources) {
    if (resource.type !== 'private-location') continue;
    if (resource.member !== false && typeof resource.payload.slugName === 'string') {
      slugs.set(resource.logicalId, resource.payload.slugName);
    } else if (resource.member === false && resource.physicalId != null) {
      const answer = await api({
        method: 'GET',
        url: `/v1/private-locations/${encodeURIComponent(String(resource.physicalId))}`,
      });
      const slug = (answer.body as { slugName?: unknown } | null)?.slugName;
      if (answer.statusCode !== 200 || typeof slug !== 'string') {
        throw resourceError(
          resource,
          `private location ${resource.physicalId} is not one of the account's`,
          { field: 'physicalId' },
          'OUTPOST_ERR_NOT_FOUND',
        );
      }
      slugs.set(resource.logicalId, slug);
    }
  }
  const undo: Undo[] = [];
  const diff: DeployChange[] = [];
  const map: ProjectResourceRow[] = [];
  const resolve = (resource: DeployResource, value: unknown, path: string): unknown => {
    const ref = refOf(value);
    if (ref !== undefined) {
      const id = ids.get(ref);
      if (id === undefined) {
        throw resourceError(resource, `${path} names "${ref}", which the project does not define`, {
          field: path,
          rule: 'ref',
        });
      }
      return id;
    }
    if (Array.isArray(value)) return value.map((item, i) => resolve(resource, item, `${path}[${i}]`));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, resolve(resource, v, path ? `${path}.${k}` : k)]),
      );
    }
    return value;
  };
  try {
    for (const { resource, existing } of plan.upserts) {
      if (FOLDED.includes(resource.type)) continue;
      const kind = KINDS.get(resource.type)!;
      const body = resolve(resource, resource.payload, '') as Record<string, unknown>;
      shapeBody(resource, body, subscriptions, resolve);
      placeOnPrivateLocations(resource, body, assignments, slugs);
      if (existing === undefined) {
        const answer = await api({ method: 'POST', url: safely(resource, () => kind.create(body)), body });
        if (answer.statusCode >= 300) throw failedCall(resource, answer.statusCode, answer.body);
        const id = idIn(answer.body, resource, kind.idField);
        undo.push(async () => void (await api({ method: 'DELETE', url: kind.remove(id) })));
        ids.set(resource.logicalId, id);
        diff.push({ type: resource.type, logicalId: resource.logicalId, physicalId: id, action: 'CREATE' });
      } else {
        const url = safely(resource, () => kind.update(existing, body));
        const before = await api({ method: 'GET', url: kind.remove(existing) });
        const answer = await api({ method: 'PUT', url, body });
        if (answer.statusCode === 404) {
          throw resourceError(
            resource,
            `its ${resource.type} ${existing} was deleted outside the project; remove it from the project or deploy it under a new logical id`,
            { field: 'logicalId' },
            'OUTPOST_ERR_NOT_FOUND',
          );
        }
        if (answer.statusCode >= 300) throw failedCall(resource, answer.statusCode, answer.body);
        if (before.statusCode === 200) {
          undo.push(async () => void (await api({ method: 'PUT', url, body: before.body })));
        }
        ids.set(resource.logicalId, existing);
        diff.push({
          type: resource.type,
          logicalId: resource.logicalId,
          physicalId: existing,
          action: 'UPDATE',
        });
      }
      map.push({
        type: resource.type,
        logical_id: resource.logicalId,
        physical_id: String(ids.get(resource.logicalId)),
      });
    }
    for (const { resource, existing } of folded) {
      const payload = resource.payload as Record<string, unknown>;
      const from = payload.alertChannelId ?? payload.privateLocationId;
      const channel = ids.get(refOf(from) ?? '') ?? from;
      const target =
        ids.get(refOf(payload.checkId ?? payload.groupId) ?? '') ?? payload.checkId ?? payload.groupId;
      const id = `${String(channel)}:${String(target)}`;
      diff.push({
        type: resource.type,
        logicalId: resource.logicalId,
        physicalId: id,
        action: existing === undefined ? 'CREATE' : 'UPDATE',
      });
      map.push({ type: resource.type, logical_id: resource.logicalId, physical_id: id });
    }
  } catch (err) {
    for (const step of undo.reverse()) {
      try {
        await step();
      } catch (undoErr) {
        onUndoError(undoErr);
      }
    }
    throw err;
  }
  for (const row of plan.deletes) {
    const id = physicalIdOf(row.physical_id);
    diff.push({ type: row.type, logicalId: row.logical_id, physicalId: id, action: 'DELETE' });
    const kind = KINDS.get(row.type);
    if (!kind) continue; // a subscription: gone with its check's or group's update
    const answer = await api({ method: 'DELETE', url: kind.remove(id) });
    // Already gone (deleted outside the project) is what the deploy wanted.
    if (answer.statusCode >= 300 && answer.statusCode !== 404) {
      throw failedCall(
        { type: row.type, logicalId: row.logical_id, payload: {} },
        answer.statusCode,
        answer.body,
      );
    }
  }
  return { diff, map };
}

/** Deletes every resource of a project's map, in reverse dependency order; those already gone are skipped. */
export async function deleteAll(rows: readonly ProjectResourceRow[], api: Api): Promise<void> {
  const order = (type: string) => DEPLOYABLE_TYPES.indexOf(type);
  for (const row of [...rows].sort((a, b) => order(b.type) - order(a.type))) {
    const kind = KINDS.get(row.type);
    if (!kind) continue;
    const answer = await api({ method: 'DELETE', url: kind.remove(physicalIdOf(row.physical_id)) });
    if (answer.statusCode >= 300 && answer.statusCode !== 404) {
      throw failedCall(
        { type: row.type, logicalId: row.logical_id, payload: {} },
        answer.statusCode,
        answer.body,
      );
    }
  }
}

/**
 * Places a check, or a group's checks, on the private locations its project's assignments name (by their
 * slugs, which the routes take), unless its payload names `privateLocations` itself.
 */
function placeOnPrivateLocations(
  resource: DeployResource,
  body: Record<string, unknown>,
  assignments: DeployPlan['upserts'],
  slugs: ReadonlyMap<string, string>,
): void {
  if (resource.type !== 'check' && resource.type !== 'check-group') return;
  if (body.privateLocations !== undefined) return;
  const [type, field] =
    resource.type === 'check' ? [CHECK_ASSIGNMENT, 'checkId'] : [GROUP_ASSIGNMENT, 'groupId'];
  const own = assignments
    .map(({ resource: assignment }) => assignment)
    .filter(
      (assignment) => assignment.type === type && refOf(assignment.payload[field]) === resource.logicalId,
    );
  if (own.length === 0) return;
  body.privateLocations = own.map((assignment) => {
    const location = refOf(assignment.payload.privateLocationId) ?? '';
    const slug = slugs.get(location);
    if (slug === undefined) {
      throw resourceError(
        assignment,
        `privateLocationId names "${location}", which is no private location of the project`,
        {
          field: 'privateLocationId',
          rule: 'ref',
        },
      );
    }
    return slug;
  });
}

/** Runs `make`, naming `resource` in the error it throws. */
function safely<T>(resource: DeployResource, make: () => T): T {
  try {
    return make();
  } catch (err) {
    if (err instanceof HttpError) throw resourceError(resource, err.message, err.attributes, err.code);
    throw err;
  }
}

/**
 * What a construct's payload needs to be its route's body: the check's `checkType` goes into the path; an ICMP
 * check gets the `heartbeat` and `script` its route requires (docs/checks.md); a status page's card services
 * are `{id}` objects; a check or group gets the alert channels its subscriptions name.
 */
function shapeBody(
  resource: DeployResource,
  body: Record<string, unknown>,
  subscriptions: DeployPlan['upserts'],
  resolve: (resource: DeployResource, value: unknown, path: string) => unknown,
): void {
  if (resource.type === 'check' || resource.type === 'check-group') {
    const targetField = resource.type === 'check' ? 'checkId' : 'groupId';
    const own = subscriptions
      .map(({ resource: sub }) => sub)
      .filter((sub) => refOf(sub.payload[targetField]) === resource.logicalId);
    body.alertChannelSubscriptions = own.map((sub) => ({
      alertChannelId: resolve(sub, sub.payload.alertChannelId, 'alertChannelId'),
      activated: sub.payload.activated !== false,
    }));
  }
  if (resource.type === 'check-group') delete body.v; // the construct's version (CheckGroupV2), no field
  if (resource.type === 'check') {
    // The CLI's uploaded Playwright snapshots (visual comparisons): Outpost stores none.
    delete body.snapshots;
    // A heartbeat runs nowhere: the scheduling fields every construct sends mean nothing for it.
    if (body.checkType === 'HEARTBEAT') {
      for (const field of ['frequency', 'locations', 'doubleCheck', 'runParallel']) delete body[field];
    }
    if (body.checkType === 'ICMP') {
      body.heartbeat ??= {};
      body.script ??= '';
    }
  }
  if (resource.type === 'status-page' && Array.isArray(body.cards)) {
    for (const card of body.cards as { services?: unknown[] }[]) {
      if (Array.isArray(card.services)) {
        card.services = card.services.map((service) =>
          typeof service === 'string' || typeof service === 'number' ? { id: service } : service,
        );
      }
    }
  }
}
