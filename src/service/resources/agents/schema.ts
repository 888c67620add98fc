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

/**
 * What an agent's key lets it serve: data-center locations (an account API key; every one, or those its
 * `OUTPOST_AGENT_LOCATIONS` names), or one private location (a `pl_` key, as the agent `outpost up` starts).
 */
const AGENT_SCOPES = ['ACCOUNT', 'PRIVATE_LOCATION'] as const;

/** Query of `GET /v1/agents/{id}/error-reports`: `limit` 1–100 (default 10), `page` (default 1). */
export const AgentErrorReportsQuery = PageQuery(10);

const SlotsSchema = Type.Object({
  uptime: Type.Integer({ minimum: 0, description: 'ICMP, DNS, TCP, URL and gRPC jobs' }),
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
        description:
          'Run locations it serves: its private location, or the data-center locations it named; null: every data-center location (scope ACCOUNT). Never a private location of an account-key agent.',
      }),
    ),
    hostName: Nullable(Type.String({ description: 'The host name it reports; null before its first claim' })),
    firstSeenAt: Timestamp,
    lastSeenAt: Type.String({ format: 'date-time', description: 'Its last claim' }),
    stoppedAt: Nullable(
      Type.String({ format: 'date-time', description: 'When it said it stopped; null while it runs' }),
    ),
    connected: Type.Boolean({
      description:
        'Claimed within the last 35 s (the longest long poll, 20 s, and a 15 s margin) and not stopped since',
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
