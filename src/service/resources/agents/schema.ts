import { Type } from '@sinclair/typebox';
import { CHECK_TYPES } from '../../../protocol/index.js';
import { PageQuery } from '../../platform/http/pagination.js';
import {
  Nullable,
  StringEnum,
  strict,
  NullableTimestamp,
  Timestamp,
} from '../../platform/http/schema-helpers.js';

/** What an agent's key lets it serve: every location of the account (an account API key, as the agent `outpost up` starts), or one private location. */
const AGENT_SCOPES = ['ACCOUNT', 'PRIVATE_LOCATION'] as const;

/** Query of `GET /v1/agents/{id}/error-reports`: `limit` 1–100 (default 10), `page` (default 1). */
export const AgentErrorReportsQuery = PageQuery(10);

const SlotsSchema = Type.Object({
  uptime: Type.Integer({ minimum: 0, description: 'ICMP, DNS, TCP and URL jobs' }),
  main: Type.Integer({ minimum: 0, description: 'API and browser jobs' }),
});

/** An agent as `GET /v1/agents` and `GET /v1/agents/{id}` answer it. Times are ISO 8601. */
export const AgentResponseSchema = Type.Object(
  {
    id: Type.String(),
    version: Type.String(),
    scope: StringEnum(AGENT_SCOPES),
    privateLocation: Nullable(
      Type.Object({ id: Type.String(), slugName: Type.String(), name: Type.String() }, strict),
    ),
    locations: Nullable(
      Type.Array(Type.String(), {
        description: 'Run locations it serves; null: every location of the account (scope ACCOUNT)',
      }),
    ),
    firstSeenAt: Timestamp,
    lastSeenAt: Type.String({ format: 'date-time', description: 'Its last claim' }),
    connected: Type.Boolean({
      description: 'Claimed within the last 35 s: the longest long poll (20 s) and a 15 s margin',
    }),
    freeSlots: Nullable(SlotsSchema),
    checkTypes: Type.Array(StringEnum(CHECK_TYPES)),
    runtimes: Type.Array(Type.String()),
    runningJobs: Type.Array(
      Type.Object(
        {
          jobId: Type.String(),
          checkId: Type.String(),
          checkType: StringEnum(CHECK_TYPES),
          runLocation: Type.String(),
          checkSessionId: Nullable(Type.String()),
          leaseExpiresAt: NullableTimestamp,
        },
        strict,
      ),
    ),
    errorReports: Type.Object(
      {
        count: Type.Integer({ minimum: 0, description: 'Reports kept (retention applies)' }),
        lastReportedAt: NullableTimestamp,
      },
      strict,
    ),
  },
  strict,
);

/** One error report an agent sent (`POST /v1/agent/events`): what it sent, and when it arrived. */
export const AgentErrorReportSchema = Type.Object(
  {
    id: Type.Integer(),
    agentId: Type.String(),
    created_at: Timestamp,
    message: Type.String(),
    stack: Nullable(Type.String()),
    agentVersion: Type.String(),
    platform: Type.String(),
    runtimeVersion: Type.String(),
  },
  strict,
);
