import { type Static, Type } from '@sinclair/typebox';
import { JobSchema } from './job.js';
import { CHECK_TYPES, LOCATIONS } from './enums.js';
import { CheckResultSchema } from './result.js';

/** Version of the agent⇄service protocol; the service refuses agents of another major. */
export const PROTOCOL_VERSION = 1;

/** Longest long poll a claim may ask for, seconds (docs/protocol.md). */
export const MAX_CLAIM_WAIT_SECONDS = 20;

/** Largest artifact the service accepts, bytes: 150 MB (docs/api.md, "Limits"). */
export const MAX_ARTIFACT_SIZE_BYTES = 157_286_400;

/**
 * Largest result body the service accepts on `POST /v1/agent/jobs/{jobId}/result`, bytes of
 * JSON: 8 MiB (answered 413 above it). The agent trims a larger result to fit
 * (src/agent/result-size.ts `fitResult`) rather than dropping it.
 */
export const MAX_RESULT_SIZE_BYTES = 8 * 1024 * 1024;

/** Header carrying the agent's id, a UUID chosen at agent start. */
export const AGENT_ID_HEADER = 'x-agent-id';

/** Body of `POST /v1/agent/jobs/claim`. */
export const ClaimRequestSchema = Type.Object(
  {
    agentVersion: Type.String({ maxLength: 64 }),
    protocolVersion: Type.Integer({ minimum: 1 }),
    /** Check types this agent can run. */
    checkTypes: Type.Array(Type.Union(CHECK_TYPES.map((t) => Type.Literal(t))), { maxItems: 20 }),
    /** Runtime ids this agent holds. */
    runtimes: Type.Array(Type.String({ maxLength: 32 }), { maxItems: 20 }),
    /** Free slots per job class; the answer never holds more jobs than these. */
    freeSlots: Type.Object(
      {
        uptime: Type.Integer({ minimum: 0, maximum: 1000 }),
        main: Type.Integer({ minimum: 0, maximum: 1000 }),
      },
      { additionalProperties: false },
    ),
    /** Seconds to hold the request open when no job is ready, 0–20. */
    waitSeconds: Type.Integer({ minimum: 0, maximum: 20 }),
    /**
     * The data-center location names this agent serves, when it authenticates with an account API key
     * (`OUTPOST_AGENT_LOCATIONS`); absent: every one of {@link LOCATIONS}. Ignored for a private-location key,
     * which serves its own location only. Never a private location's slug (docs/protocol.md, "Run locations").
     */
    locations: Type.Optional(
      Type.Array(Type.Union(LOCATIONS.map((l) => Type.Literal(l))), { maxItems: LOCATIONS.length }),
    ),
    /** The agent's host name, recorded with its results (at most 255 characters). */
    hostName: Type.Optional(Type.String({ maxLength: 255 })),
    /**
     * True: the agent acknowledges the jobs of each answer (`POST /v1/agent/jobs/ack`) and their leases start
     * then; until acknowledged, a claimed job returns to the queue after {@link CLAIM_ACK_WINDOW_MS}. Absent or
     * false (older agents): the lease starts at the claim.
     */
    acknowledges: Type.Optional(Type.Boolean()),
    /**
     * Seconds between heartbeats of a waiting claim, 1–10. Set: the service sends the answer's status and headers
     * at once and then one space every `heartbeatSeconds` while it waits (JSON allows the whitespace before the
     * body), so the agent can tell a service that stopped answering (a frozen replica behind a balancer keeps the
     * connection open) from one with nothing to hand out, and give up after a few silent heartbeats instead of
     * at the end of the wait. An error while waiting resets the connection instead of a status. Absent (older
     * agents): the answer comes whole at the end (docs/protocol.md, "Claim heartbeats").
     */
    heartbeatSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
  },
  { additionalProperties: false },
);
/** The body of `POST /v1/agent/jobs/claim` (see {@link ClaimRequestSchema}); `waitSeconds` 0–20. */
export type ClaimRequest = Static<typeof ClaimRequestSchema>;

/** Answer of `POST /v1/agent/jobs/claim`. */
export const ClaimResponseSchema = Type.Object({
  jobs: Type.Array(JobSchema),
});

/**
 * How long a claimed job waits for its agent's acknowledgement before it returns to the queue, ms: longer than
 * an acknowledgement's round trip with retries, far shorter than a lease (docs/protocol.md, "Acknowledgement").
 */
export const CLAIM_ACK_WINDOW_MS = 30_000;

/** Body of `POST /v1/agent/jobs/ack`: the ids of the jobs of a claim's answer the agent received. */
export const AckRequestSchema = Type.Object(
  { jobIds: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 2000 }) },
  { additionalProperties: false },
);
/** The body of `POST /v1/agent/jobs/ack` (see {@link AckRequestSchema}). */
export type AckRequest = Static<typeof AckRequestSchema>;

/**
 * Answer of `POST /v1/agent/jobs/ack`: `acknowledged` jobs are the agent's to run, their leases started now
 * for `leaseMs`; `lost` ones are not (the acknowledgement came too late, the job ended, or it is another
 * agent's): the agent drops them without running them.
 */
export const AckResponseSchema = Type.Object({
  acknowledged: Type.Array(Type.String()),
  lost: Type.Array(Type.String()),
  leaseMs: Type.Integer(),
});
/** The answer of `POST /v1/agent/jobs/ack` (see {@link AckResponseSchema}). */
export type AckResponse = Static<typeof AckResponseSchema>;

/** Answer of `POST /v1/agent/jobs/{jobId}/lease`. */
export const LeaseResponseSchema = Type.Object({
  /** ISO time the lease now ends. */
  leaseExpiresAt: Type.String(),
  leaseMs: Type.Integer(),
});
/** The answer of `POST /v1/agent/jobs/{jobId}/lease` (see {@link LeaseResponseSchema}): the new end (ISO 8601) and length (milliseconds) of the lease. */
export type LeaseResponse = Static<typeof LeaseResponseSchema>;

/** Body of `POST /v1/agent/events`: an error report, nothing else (docs/api.md, "Events" 7). */
export const AgentEventSchema = Type.Object(
  {
    message: Type.String({ maxLength: 4096 }),
    stack: Type.Optional(Type.String({ maxLength: 16384 })),
    agentVersion: Type.String({ maxLength: 64 }),
    platform: Type.String({ maxLength: 128 }),
    runtimeVersion: Type.String({ maxLength: 64 }),
  },
  { additionalProperties: false },
);
/** The body of `POST /v1/agent/events`, an agent's error report (see {@link AgentEventSchema}). */
export type AgentEvent = Static<typeof AgentEventSchema>;

/** Most results one `POST /v1/agent/results` carries. */
export const MAX_RESULT_BATCH_ITEMS = 100;

/**
 * Body of `POST /v1/agent/results`: the results of several jobs of the agent, each as
 * `POST /v1/agent/jobs/{jobId}/result` takes it, stored in one transaction (docs/protocol.md, "Results in
 * batches"). At most {@link MAX_RESULT_BATCH_ITEMS} items and {@link MAX_RESULT_SIZE_BYTES} of JSON in all
 * (a larger body is answered 413): the agent posts a result alone when it is large.
 */
export const ResultBatchRequestSchema = Type.Object(
  {
    results: Type.Array(
      Type.Object(
        { jobId: Type.String({ minLength: 1, maxLength: 64 }), result: CheckResultSchema },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_RESULT_BATCH_ITEMS },
    ),
  },
  { additionalProperties: false },
);
/** The body of `POST /v1/agent/results` (see {@link ResultBatchRequestSchema}). */
export type ResultBatchRequest = Static<typeof ResultBatchRequestSchema>;

/**
 * One item's answer in `POST /v1/agent/results`, in the order posted: stored (or a `duplicate` of what the
 * agent posted before) with the `resultType` the service decided; or refused, with the status and code
 * `POST /v1/agent/jobs/{jobId}/result` would have answered (`error`: 404 OUTPOST_ERR_NOT_FOUND, 409
 * OUTPOST_ERR_LEASE_LOST), `stored` false and `resultType` null.
 */
export const ResultBatchItemAnswerSchema = Type.Object({
  jobId: Type.String(),
  stored: Type.Boolean(),
  duplicate: Type.Boolean(),
  resultType: Type.Union([Type.Literal('FINAL'), Type.Literal('ATTEMPT'), Type.Null()]),
  error: Type.Union([
    Type.Object({ statusCode: Type.Integer(), code: Type.String(), message: Type.String() }),
    Type.Null(),
  ]),
});
/** One item's answer of `POST /v1/agent/results` (see {@link ResultBatchItemAnswerSchema}). */
export type ResultBatchItemAnswer = Static<typeof ResultBatchItemAnswerSchema>;

/** Answer of `POST /v1/agent/results`: one entry per item posted, in order. */
export const ResultBatchResponseSchema = Type.Object({ results: Type.Array(ResultBatchItemAnswerSchema) });
/** The answer of `POST /v1/agent/results` (see {@link ResultBatchResponseSchema}). */
export type ResultBatchResponse = Static<typeof ResultBatchResponseSchema>;
