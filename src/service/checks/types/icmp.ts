import { Type } from '@sinclair/typebox';
import { ICMP_ASSERTION_SOURCES, ICMP_FREQUENCIES, IP_FAMILIES } from '../../../protocol/index.js';
import { IntegerEnum, StringEnum, strict } from '../../platform/http/schema-helpers.js';
import { assertions, packetLoss, responseTime, sharedCheckFields } from './common.js';

/**
 * ICMP heartbeat settings: the `heartbeat` object of an ICMP check (docs/checks.md, "ICMP"), each
 * field optional, periods and graces in whole `seconds`, `minutes`, `hours` or `days`. Stored as given, not
 * used by runs; not the HEARTBEAT check type's `heartbeat` (heartbeat.ts, HeartbeatCheckSchema).
 */
export const IcmpHeartbeatSchema = Type.Object(
  {
    period: Type.Optional(Type.Integer({ minimum: 1 })),
    periodUnit: Type.Optional(StringEnum(['seconds', 'minutes', 'hours', 'days'] as const)),
    grace: Type.Optional(Type.Integer({ minimum: 0 })),
    graceUnit: Type.Optional(StringEnum(['seconds', 'minutes', 'hours', 'days'] as const)),
  },
  strict,
);

/** ICMP request (docs/api.md, "ICMP-specific fields"; limits from docs/checks.md). */
export const IcmpRequestBodySchema = Type.Object(
  {
    hostname: Type.String({ minLength: 1, maxLength: 2048, pattern: '^[^\\s/]+$' }),
    ipFamily: Type.Optional(StringEnum(IP_FAMILIES, { default: 'IPv4' })),
    pingCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
    assertions: assertions(ICMP_ASSERTION_SOURCES),
  },
  strict,
);

/**
 * Body of `POST /v1/checks/icmp`: required `name` and `request` (the hosted API's current document; its older
 * one also required `heartbeat` and `script`, which are taken and default to `{}` and `''`; docs/api.md,
 * "Checks").
 */
export const CreateIcmpCheckBody = Type.Object(
  {
    ...sharedCheckFields,
    frequency: Type.Optional(IntegerEnum(ICMP_FREQUENCIES, { default: 10 })),
    request: IcmpRequestBodySchema,
    heartbeat: Type.Optional({ ...IcmpHeartbeatSchema, default: {} }),
    script: Type.Optional(Type.String({ maxLength: 131_072, default: '' })),
    degradedResponseTime: responseTime(10_000),
    maxResponseTime: responseTime(20_000),
    degradedPacketLossThreshold: packetLoss(10),
    maxPacketLossThreshold: packetLoss(20),
  },
  strict,
);
