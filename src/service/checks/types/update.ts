import { Type } from '@sinclair/typebox';
import { CHECK_TYPES } from '../../../protocol/index.js';
import { Ignored, Nullable, StringEnum, strict } from '../../platform/http/schema-helpers.js';
import { AGENTIC_MAX_PROMPT_CHARS, AGENTIC_REPAIR_MODES } from '../../../protocol/index.js';
import { AgentRuntimeSchema } from './agentic.js';
import { SUITE_TIMEOUT_SECONDS } from './browser.js';
import { sharedCheckFields } from './common.js';
import { HeartbeatCheckSchema } from './heartbeat.js';
import { IcmpHeartbeatSchema } from './icmp.js';

/**
 * Body of `PUT /v1/checks/{id}`: the generic update body. Every field optional, as in the hosted API's
 * current document (its older one required `heartbeat` and `script`: still taken; docs/api.md, "Checks"), `frequency` any integer and `timeoutSeconds` 1–1800 (the check type's own set and cap
 * are enforced after merging), `request` an object validated against the check's type.
 */
export const UpdateCheckBody = Type.Object(
  {
    ...sharedCheckFields,
    name: Type.Optional(sharedCheckFields.name),
    checkType: Type.Optional(StringEnum(CHECK_TYPES)),
    frequency: Type.Optional(Type.Integer({ minimum: 0, maximum: 1440 })),
    request: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    heartbeat: Type.Optional(IcmpHeartbeatSchema),
    script: Type.Optional(Nullable(Type.String({ maxLength: 131_072 }))),
    dependencies: Type.Optional(
      Nullable(
        Type.Array(Type.Object({ path: Type.String({ maxLength: 1024 }), content: Type.String() }, strict), {
          maxItems: 100,
        }),
      ),
    ),
    degradedResponseTime: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 300_000 }))),
    maxResponseTime: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 300_000 }))),
    timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: SUITE_TIMEOUT_SECONDS })),
    degradedPacketLossThreshold: Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 100 }))),
    maxPacketLossThreshold: Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 100 }))),
    // AGENTIC checks' own fields (types/agentic.ts); another type's check refuses them after the merge.
    prompt: Type.Optional(Type.String({ minLength: 1, maxLength: AGENTIC_MAX_PROMPT_CHARS })),
    agentRuntime: Type.Optional(AgentRuntimeSchema),
    repairMode: Type.Optional(StringEnum(AGENTIC_REPAIR_MODES)),
    scriptVersion: Ignored(
      Type.Integer({ minimum: 0 }),
      "read-only: the service counts the script's versions",
    ),
  },
  strict,
);

/**
 * Body of `PUT /v1/checks/{id}` as the route validates it: {@link UpdateCheckBody}, whose `heartbeat` also
 * takes a HEARTBEAT check's fields (`schedule`, `timezone`, `pingToken`; `grace` and `graceUnit`
 * optional). Each type then checks `heartbeat` as its own: the registry's `updateHeartbeat` schema before the
 * merge (ICMP's settings for the agent-run types), HEARTBEAT's rules after it.
 */
export const UpdateAnyCheckBody = Type.Object(
  {
    ...UpdateCheckBody.properties,
    heartbeat: Type.Optional(
      Type.Object(
        {
          ...IcmpHeartbeatSchema.properties,
          ...HeartbeatCheckSchema.properties,
          grace: Type.Optional(HeartbeatCheckSchema.properties.grace),
          graceUnit: Type.Optional(HeartbeatCheckSchema.properties.graceUnit),
        },
        strict,
      ),
    ),
  },
  strict,
);
