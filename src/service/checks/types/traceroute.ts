import { Type } from '@sinclair/typebox';
import { IP_FAMILIES, TRACEROUTE_ASSERTION_SOURCES, TRACEROUTE_PROTOCOLS } from '../../../protocol/index.js';
import { badField } from '../../platform/http/errors.js';
import { Nullable, StringEnum, strict } from '../../platform/http/schema-helpers.js';
import { assertions, TCP_FREQUENCIES, uptimeCreateBody } from './common.js';

/** Probes an agent sends per hop: each UDP probe takes the next port from `port`. */
const UDP_PROBES_PER_HOP = 3;

/**
 * TRACEROUTE request (docs/checks.md, "TRACEROUTE"): `url` is a host name or address without scheme or port;
 * `protocol` ICMP (default) or UDP (the hosted API's TCP and SCTP probes are refused: Outpost's agents do
 * not send them); `port` the first UDP port (ignored for ICMP); `timeout` in seconds.
 */
export const TracerouteRequestBodySchema = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 253,
      pattern: '^[^\\s/:]+$|^[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*$',
    }),
    protocol: Type.Optional(StringEnum(TRACEROUTE_PROTOCOLS, { default: 'ICMP' })),
    port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535, default: null }))),
    ipFamily: Type.Optional(StringEnum(IP_FAMILIES, { default: 'IPv4' })),
    maxHops: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, default: 30 })),
    maxUnknownHops: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, default: 15 })),
    ptrLookup: Type.Optional(Type.Boolean({ default: true })),
    timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, default: 10 })),
    assertions: assertions(TRACEROUTE_ASSERTION_SOURCES),
  },
  strict,
);

/** `POST /v1/checks/traceroute`: degraded 3000 ms, max 5000 ms of final-hop RTT by default (at most 30 000). */
export const CreateTracerouteCheckBody = uptimeCreateBody(
  TracerouteRequestBodySchema,
  TCP_FREQUENCIES,
  3000,
  5000,
);

/**
 * UDP probes take one port each from `port` (3 a hop, up to `maxHops`): the last must be at most 65535.
 * @throws HttpError 400 naming `request.port`.
 */
export function tracerouteRules(doc: Record<string, unknown>): void {
  const request = (doc.request ?? {}) as { protocol?: string; port?: number | null; maxHops?: number };
  if (request.protocol !== 'UDP' || request.port == null) return;
  const last = request.port + (request.maxHops ?? 30) * UDP_PROBES_PER_HOP - 1;
  if (last > 65_535) {
    throw badField(
      'request.port',
      `must leave room for ${UDP_PROBES_PER_HOP} UDP probes a hop: port + maxHops × ${UDP_PROBES_PER_HOP} - 1 is ${last}, above 65535`,
      'maximum',
    );
  }
}
