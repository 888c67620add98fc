import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from '../../common/logger.js';
import type { AuthEvent } from '../platform/http/auth-events.js';
import type { Permission, Principal } from '../platform/http/permissions.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import type { Database } from '../platform/store/database.js';
import { AUDIT_PARSE_MAX_BYTES, auditDocument, truncatedDocument } from './masking.js';
import { resourceOf } from './resources.js';
import { type AuditRow, AuditQueries } from './store.js';

/** The permissions whose routes change something, and so are recorded (docs/teams.md, "Permissions"). */
const AUDITED_PERMISSIONS: ReadonlySet<Permission> = new Set<Permission>(['write', 'admin', 'owner', 'self']);
/** Methods that change nothing, never recorded whatever the route's permission (GET /v1/api-keys is admin). */
const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Longest user agent kept, characters. */
const USER_AGENT_MAX_CHARS = 512;
/** Most entries waiting to be written; past it new ones are dropped and logged (the store is down). */
const QUEUE_MAX = 10_000;

/** What an entry says of its actor: the principal's kind, id, name and role (null for a private location). */
export type AuditActor = { kind: Principal['kind']; id: string; name: string | null; role: string | null };

/** One entry to write: everything but its id and its `before` (read from the store when written). */
type PendingEntry = Omit<AuditRow, 'id' | 'before'> & {
  /** Whether `before` is the resource's last known document (a change of the document itself). */
  beforeFromLog: boolean;
};

/** The answer of a request, as its `onSend` hook saw it, until `onResponse` records it. */
const answers = new WeakMap<FastifyRequest, unknown>();

/** The actor of `principal` (never a secret: ids, the key's label or the person's email, the role). */
export function actorOf(principal: Principal): AuditActor {
  return {
    kind: principal.kind,
    id: principal.id,
    name: principal.name,
    role: principal.kind === 'private-location' ? null : principal.role,
  };
}

/** An id that sorts in the order this process makes them: time, a counter, then randomness. */
function entryIdOf(nowMs: number, sequence: number): string {
  return `${nowMs.toString(36).padStart(9, '0')}${(sequence % 36 ** 4).toString(36).padStart(4, '0')}${randomBytes(6).toString('hex')}`;
}

/**
 * Records the account's changes in its audit log (docs/teams.md, "Audit log"): every `/v1` request whose route
 * declares `write`, `admin` or `owner` (never `read` or `agent`) and is answered 2xx, whatever module owns the
 * route, and the web app's sign-ins and sign-outs. An entry is written after the answer was sent, one at a
 * time in the order of the answers (so an entry's `before`, the resource's previous `after`, is the one
 * written before it); a failed write is logged and never fails or slows a request.
 */
export class AuditRecorder {
  readonly #queries: AuditQueries;
  readonly #log: Logger;
  #tail: Promise<void> = Promise.resolve();
  #pending = 0;
  #sequence = 0;

  constructor(db: Kysely<Database>, log: Logger) {
    this.#queries = new AuditQueries(db);
    this.#log = log.child({ component: 'audit-log' });
  }

  /** Adds the recording hooks to the `/v1` scope: `onSend` keeps the answer, `onResponse` records. */
  hook(scope: ServiceApp): void {
    scope.addHook('onSend', async (request, reply, payload) => {
      if (audited(request) && reply.statusCode >= 200 && reply.statusCode < 300) {
        answers.set(request, payload);
      }
      return payload;
    });
    scope.addHook('onResponse', async (request, reply) => {
      if (!audited(request) || reply.statusCode < 200 || reply.statusCode >= 300) return;
      const payload = answers.get(request);
      answers.delete(request);
      try {
        this.#enqueue(this.#entryOf(request, reply, payload));
      } catch (err) {
        this.#log.error({ err, route: request.routeOptions.url }, 'could not record an audit entry');
      }
    });
  }

  /** Records a sign-in or sign-out of the web app; a failed sign-in naming no account is only logged. */
  authEvent(event: AuthEvent): void {
    const { request } = event;
    if (event.accountId === null || event.principal === null) {
      this.#log.info(
        { ip: request.ip, kind: event.kind },
        'failed sign-in names no account: not in an audit log',
      );
      return;
    }
    const actor = actorOf(event.principal);
    this.#enqueue({
      account_id: event.accountId,
      occurred_at: Date.now(),
      actor_kind: actor.kind,
      actor_id: actor.id,
      actor_name: actor.name,
      actor_role: actor.role,
      action: `session.${event.kind}`,
      resource_type: 'session',
      resource_id: null,
      after: null,
      ip: request.ip,
      user_agent: userAgentOf(request),
      beforeFromLog: false,
    });
  }

  /** Resolves once every entry enqueued so far is written (or its failure logged). */
  flushed(): Promise<void> {
    return this.#tail;
  }

  #entryOf(request: FastifyRequest, reply: FastifyReply, payload: unknown): PendingEntry {
    const answer = parsedAnswer(payload);
    const resource = resourceOf(
      request.method,
      request.routeOptions.url ?? request.url,
      (request.params ?? {}) as Record<string, unknown>,
      answer.parsed,
    );
    const actor = actorOf(request.principal);
    const deleted = request.method === 'DELETE' && resource.changesDocument;
    let after: string | null = null;
    if (!deleted && reply.statusCode !== 204) {
      after = answer.tooLarge ?? auditDocument(resource.resourceType, answer.parsed);
    }
    return {
      account_id: request.accountId,
      occurred_at: Date.now(),
      actor_kind: actor.kind,
      actor_id: actor.id,
      actor_name: actor.name,
      actor_role: actor.role,
      action: resource.action,
      resource_type: resource.resourceType,
      resource_id: resource.resourceId,
      after,
      ip: request.ip,
      user_agent: userAgentOf(request),
      beforeFromLog: resource.changesDocument && resource.resourceId !== null,
    };
  }

  #enqueue(entry: PendingEntry): void {
    if (this.#pending >= QUEUE_MAX) {
      this.#log.error({ action: entry.action }, 'audit log writes are behind: entry dropped');
      return;
    }
    this.#pending += 1;
    this.#tail = this.#tail.then(async () => {
      try {
        await this.#write(entry);
      } catch (err) {
        this.#log.error(
          { err, action: entry.action, resourceType: entry.resource_type, resourceId: entry.resource_id },
          'could not record an audit entry',
        );
      } finally {
        this.#pending -= 1;
      }
    });
  }

  async #write({ beforeFromLog, ...entry }: PendingEntry): Promise<void> {
    const before =
      beforeFromLog && entry.resource_id !== null && !entry.action.endsWith('.create')
        ? await this.#queries.lastAfter(entry.account_id, entry.resource_type, entry.resource_id, [
            `${entry.resource_type}.create`,
            `${entry.resource_type}.update`,
          ])
        : null;
    this.#sequence += 1;
    await this.#queries.insert({ id: entryIdOf(entry.occurred_at, this.#sequence), before, ...entry });
  }
}

/** Whether the request's route is one the audit log records (a change: see AUDITED_PERMISSIONS). */
function audited(request: FastifyRequest): boolean {
  const permission = request.routeOptions.config?.permission;
  return (
    permission !== undefined &&
    AUDITED_PERMISSIONS.has(permission) &&
    !READ_METHODS.has(request.method) &&
    request.principal !== undefined
  );
}

/** The request's user agent, at most USER_AGENT_MAX_CHARS; null without one. */
function userAgentOf(request: FastifyRequest): string | null {
  const agent = request.headers['user-agent'];
  return typeof agent === 'string' && agent !== '' ? agent.slice(0, USER_AGENT_MAX_CHARS) : null;
}

/**
 * An answer's JSON, parsed when it is a JSON text of at most AUDIT_PARSE_MAX_BYTES (anything else, a stream
 * or a file, is no document); `tooLarge`, the marker kept for a larger one.
 */
function parsedAnswer(payload: unknown): { parsed: unknown; tooLarge: string | null } {
  const bytes =
    typeof payload === 'string' ? Buffer.byteLength(payload) : Buffer.isBuffer(payload) ? payload.length : 0;
  if (bytes > AUDIT_PARSE_MAX_BYTES) return { parsed: null, tooLarge: truncatedDocument(bytes) };
  const text =
    typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
  if (text === null || text === '') return { parsed: null, tooLarge: null };
  try {
    return { parsed: JSON.parse(text) as unknown, tooLarge: null };
  } catch {
    return { parsed: null, tooLarge: null };
  }
}
