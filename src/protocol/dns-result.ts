import { type Static, Type } from '@sinclair/typebox';
import { DNS_PROTOCOLS } from './enums.js';

/** Where a DNS check sent its query: the name server as the check gave it (or the system default). */
export const DnsNameServerInfoSchema = Type.Object({
  /** Name server as configured: an IP address or a host name; the system resolver's first when the check gave none. */
  host: Type.String(),
  /** UDP/TCP port, 1–65535. */
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  /** Transport that carried the final answer: `TCP` after a truncated UDP answer was retried. */
  protocol: Type.Union(DNS_PROTOCOLS.map((p) => Type.Literal(p))),
});

/** One question of the DoH-style JSON answer: `type` is the numeric RR type (1 = A, 28 = AAAA, …). */
export const DnsJsonQuestionSchema = Type.Object({ name: Type.String(), type: Type.Integer() });

/** One resource record of the DoH-style JSON answer; `TTL` in seconds, `data` in presentation format. */
export const DnsJsonRecordSchema = Type.Object({
  name: Type.String(),
  type: Type.Integer(),
  TTL: Type.Integer(),
  data: Type.String(),
});

/**
 * The answer as DoH JSON (Google / Cloudflare `application/dns-json` style, close to RFC 8427):
 * `Status` is the numeric return code (0 NOERROR, 3 NXDOMAIN, …), flags are booleans, names are
 * fully qualified with a trailing dot. `Answer` is always present (possibly empty); `Authority`
 * only when the server sent one (SOA of a negative answer).
 */
export const DnsJsonAnswerSchema = Type.Object({
  Status: Type.Integer(),
  TC: Type.Boolean(),
  RD: Type.Boolean(),
  RA: Type.Boolean(),
  AD: Type.Boolean(),
  CD: Type.Boolean(),
  Question: Type.Array(DnsJsonQuestionSchema),
  Answer: Type.Array(DnsJsonRecordSchema),
  Authority: Type.Optional(Type.Array(DnsJsonRecordSchema)),
});
/** A DNS answer as DoH-style JSON (see {@link DnsJsonAnswerSchema}): `Status` the numeric return code, `TTL`s in seconds. */
export type DnsJsonAnswer = Static<typeof DnsJsonAnswerSchema>;

/**
 * DNS part of a result (docs/checks.md, "DNS": result part). Fields that need an
 * answer (`returnCode`, `json`, `responseTime`) are null when none came (timeout, refused
 * connection); `answer` is then empty.
 */
export const DnsCheckResultSchema = Type.Object({
  /** Return code by name: NOERROR, NXDOMAIN, SERVFAIL, REFUSED, … (RFC 6895 §2.3, EDNS extended codes included). */
  returnCode: Type.Union([Type.String(), Type.Null()]),
  /** The answer section as dig prints it: one `name TTL IN TYPE data` line per record, tab-separated. */
  answer: Type.String(),
  /** The whole response as DoH-style JSON (see DnsJsonAnswerSchema). */
  json: Type.Union([DnsJsonAnswerSchema, Type.Null()]),
  /**
   * Milliseconds from just before the query was sent to the answer's arrival, as dig's
   * "Query time" (socket setup excluded). After a truncated UDP answer: from the UDP send to
   * the TCP answer, the retry's connect included.
   */
  responseTime: Type.Union([Type.Number(), Type.Null()]),
  nameServerInfo: DnsNameServerInfoSchema,
  /** The UDP answer had the TC bit and the query was repeated over TCP (RFC 7766 §5). */
  truncatedRetriedOverTcp: Type.Boolean(),
});
/** The DNS part of a result (see {@link DnsCheckResultSchema}); `responseTime` in milliseconds, null without an answer. */
export type DnsCheckResult = Static<typeof DnsCheckResultSchema>;
