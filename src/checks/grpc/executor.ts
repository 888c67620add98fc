import type { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { status as grpcStatus, type Metadata } from '@grpc/grpc-js';
import {
  type Assertion,
  type AssertionResult,
  GRPC_ASSERTION_SOURCES,
  type GrpcCheckResult,
  GrpcRequestSchema,
  type Job,
  type RunOutcome,
} from '../../protocol/index.js';
import { abortedError } from '../../common/abort.js';
import { roundMs } from '../../common/clock.js';
import { interpolate } from '../../common/interpolate.js';
import { credentialTokens, Scrubber } from '../../common/scrub.js';
import { createDnsResolver, ResolveError, type ResolvedAddress, resolveHost } from '../../net/resolve.js';
import {
  DEFAULT_GRPC_MAX_RECEIVE_BYTES,
  GrpcChannel,
  type GrpcUnaryResult,
  outgoingMetadata,
} from '../../net/grpc/channel.js';
import { reflectDescriptors } from '../../net/grpc/reflection.js';
import {
  decodeHealthCheckResponse,
  encodeHealthCheckRequest,
  HEALTH_STATUS_LABELS,
  WireFormatError,
} from '../../net/grpc/wire.js';
import { evaluateAssertions, jsonPathSource, valueSource } from '../assertions/index.js';
import type { AssertionSourceReader } from '../assertions/engine.js';
import type { Executor, ExecutorContext } from '../executor.js';
import { errorRunOutcome, judgeRun, releaseOutcome, validateRequest } from '../outcome.js';
import { RunLogRecorder } from '../run-log.js';
import { runtimeVariables } from '../runtime-variables.js';
import { runBudgetMs } from '../time-budget.js';
import { decodeOffThread, encodeOffThread, PROTO_WORK_TIMEOUT_MS } from './off-thread.js';
import type { ProtoSchema } from './proto-work.js';

/** Longest `responseMessage` kept, characters of JSON: 64 KiB. */
export const GRPC_MAX_RESPONSE_CHARS = 64 * 1024;

/** The health service every HEALTH run calls. */
const HEALTH_SERVICE = 'grpc.health.v1.Health';

/** Metadata keys whose values are credentials: scrubbed from everything the run reports. */
const SECRET_METADATA = new Set(['authorization', 'cookie', 'x-api-key', 'proxy-authorization']);

/** Options of the gRPC executor. */
export type GrpcExecutorOptions = {
  /** Resolve with the OS resolver (getaddrinfo) instead of querying DNS (`USE_OS_DNS_RESOLVER`). Default false. */
  useOsDnsResolver?: boolean;
  /** Name servers to query instead of /etc/resolv.conf's (`"127.0.0.1:5353"`); ignored with useOsDnsResolver. */
  dnsServers?: readonly string[];
  /** CA certificates (PEM) trusted besides Node's roots. */
  ca?: string | readonly string[];
  /** Longest response message accepted, bytes; a longer one fails the run with RESOURCE_EXHAUSTED. Default 1 MiB. */
  maxResponseBytes?: number;
};

/**
 * What the method field names: `service` (`pkg.Service`) and `method` (`Method`), from
 * `/pkg.Service/Method`, `pkg.Service/Method`, `pkg.Service.Method`, or `Method` with
 * `serviceDefinition` `pkg.Service`; null when neither names a service.
 */
export function methodOf(
  method: string,
  serviceDefinition: string,
): { service: string; method: string } | null {
  const text = method.trim().replace(/^\//, '');
  const slash = text.lastIndexOf('/');
  if (slash > 0 && slash < text.length - 1)
    return { service: text.slice(0, slash), method: text.slice(slash + 1) };
  const service = serviceDefinition.trim();
  if (service !== '' && text !== '' && !text.includes('/')) {
    return { service, method: text.startsWith(`${service}.`) ? text.slice(service.length + 1) : text };
  }
  const dot = text.lastIndexOf('.');
  if (dot > 0 && dot < text.length - 1 && !text.includes('/')) {
    return { service: text.slice(0, dot), method: text.slice(dot + 1) };
  }
  return null;
}

/** The name of a gRPC status code: `NOT_FOUND`. */
function statusName(code: number): string {
  return (grpcStatus as unknown as Record<number, string>)[code] ?? `CODE_${code}`;
}

/** One run's state: its clock, logs, scrubber and the result part it fills. */
type Run = {
  job: Job;
  context: ExecutorContext;
  startedAt: Date;
  t0: number;
  logs: RunLogRecorder;
  scrubber: Scrubber;
  part: GrpcCheckResult;
  assertions: Assertion[];
  /** The connection was logged (it is looked at after reflection and again after the call). */
  connectedLogged: boolean;
};

/**
 * Runs gRPC monitors (docs/checks.md, "gRPC"): resolves the host as TCP checks do (src/net/resolve.ts),
 * connects over a channel of its own (plaintext or TLS), and calls either `grpc.health.v1.Health/Check`
 * (HEALTH) or a unary method (BEHAVIOR) whose message types come from `protoContent` or, without it, from
 * the server's reflection. Parsing the types, encoding the request and decoding the response run in proto
 * worker threads. Judges GRPC_STATUS, JSON_RESPONSE, HEADERS and RESPONSE_TIME assertions; without a
 * GRPC_STATUS assertion a status other than OK fails the run, and a HEALTH run fails unless SERVING.
 */
export class GrpcExecutor implements Executor {
  readonly checkType = 'GRPC' as const;
  readonly #useOs: boolean;
  readonly #resolver: Resolver | undefined;
  readonly #extraCa: readonly string[];
  readonly #maxResponseBytes: number;

  constructor(options: GrpcExecutorOptions = {}) {
    this.#useOs = options.useOsDnsResolver ?? false;
    this.#resolver = options.dnsServers ? createDnsResolver({ servers: options.dnsServers }) : undefined;
    this.#extraCa =
      options.ca === undefined ? [] : typeof options.ca === 'string' ? [options.ca] : [...options.ca];
    const max = options.maxResponseBytes ?? DEFAULT_GRPC_MAX_RECEIVE_BYTES;
    if (!Number.isInteger(max) || max < 1)
      throw new RangeError(`maxResponseBytes must be an integer ≥ 1; got ${max}`);
    this.#maxResponseBytes = max;
  }

  /**
   * Runs one gRPC job. Never throws for a malformed job (→ `hasErrors`) or a target that fails
   * (→ FAILED with the reason). Throws OUTPOST_ERR_ABORTED when `context.signal` aborts.
   */
  async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
    const startedAt = new Date();
    const t0 = performance.now();
    const logs = new RunLogRecorder(context.log);
    const scrubber = new Scrubber(job.environmentVariables.filter((v) => v.secret).map((v) => v.value));
    logs.scrubWith(scrubber);
    const fail = (message: string) => releaseOutcome(errorRunOutcome(startedAt, logs, message), scrubber);
    if (job.check.checkType !== 'GRPC') return fail(`check type ${job.check.checkType} is not GRPC`);
    const plan = validateRequest('GRPC', GrpcRequestSchema, job.check.request, GRPC_ASSERTION_SOURCES);
    if ('problem' in plan) return fail(plan.problem);
    const request = plan.request;

    const env: Record<string, string> = {};
    for (const v of job.environmentVariables) env[v.key] = v.value;
    Object.assign(env, runtimeVariables(job));
    const missing = new Set<string>();
    const fill = (text: string) => interpolate(text, env, (name) => missing.add(name));
    const config = request.grpcConfig;
    const host = fill(request.url).trim();
    const portText = typeof request.port === 'number' ? String(request.port) : fill(request.port).trim();
    const port = /^[0-9]{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
    const metadataEntries = config.metadata.map((m) => ({ key: fill(m.key).trim(), value: fill(m.value) }));
    for (const { key, value } of metadataEntries) {
      if (SECRET_METADATA.has(key.toLowerCase()))
        for (const form of credentialTokens(value)) scrubber.add(form);
    }
    const message = fill(config.message);
    for (const name of missing) logs.add('WARN', `variable {{${name}}} is not defined; left as written`);

    const target =
      config.mode === 'HEALTH'
        ? { service: HEALTH_SERVICE, method: 'Check' }
        : methodOf(fill(config.method), fill(config.serviceDefinition));
    const grpcMethod = target ? `${target.service}/${target.method}` : config.method;
    const part: GrpcCheckResult = {
      grpcStatusCode: null,
      healthStatus: null,
      timingPhases: {
        dns: 0,
        connect: null,
        tls: null,
        ready: null,
        reflection: null,
        firstResponse: null,
        total: 0,
      },
      requestError: null,
      request: { url: host, port: Number.isNaN(port) ? null : port, grpcMode: config.mode, grpcMethod },
      response: {
        grpcMode: config.mode,
        host,
        resolvedIp: null,
        ipFamily: request.ipFamily,
        resolver: this.#useOs ? 'os' : 'dns',
        port: Number.isNaN(port) ? null : port,
        grpcMethod,
        responseMessage: '',
        responseTruncated: false,
        grpcStatusCode: null,
        grpcStatusMessage: '',
        healthStatus: null,
        healthStatusLabel: null,
        metadata: [],
        discoveredMethods: [],
        descriptorSource:
          config.mode === 'HEALTH' ? 'builtIn' : config.protoContent.trim() !== '' ? 'protoContent' : null,
        tls: null,
        requestError: null,
      },
    };
    const run: Run = {
      job,
      context,
      startedAt,
      t0,
      logs,
      scrubber,
      part,
      assertions: request.assertions,
      connectedLogged: false,
    };
    // The run's end: the request's timeout, within the job's budget.
    const deadlineAt = t0 + Math.min(request.timeout * 1000, runBudgetMs(job.timeoutMs));
    if (host === '' || /[\s/]/.test(host))
      return this.#unreachable(run, `url ${JSON.stringify(host)} is not a host name or address`);
    if (!(port >= 1 && port <= 65535))
      return this.#unreachable(run, `port ${JSON.stringify(portText)} is not a port number (1–65535)`);
    if (target === null) {
      return this.#unreachable(
        run,
        'grpcConfig.method names no service: give /package.Service/Method, or serviceDefinition and method',
      );
    }
    let metadata: Metadata;
    try {
      metadata = outgoingMetadata(metadataEntries);
    } catch (err) {
      return this.#unreachable(run, `grpcConfig.metadata: ${(err as Error).message}`);
    }

    let resolved: ResolvedAddress;
    try {
      resolved = await resolveHost(host, {
        ipFamily: request.ipFamily,
        useOsDnsResolver: this.#useOs,
        signal: context.signal,
        resolver: this.#resolver,
      });
    } catch (err) {
      if (!(err instanceof ResolveError)) throw err;
      part.timingPhases.dns = roundMs(performance.now() - t0);
      return this.#unreachable(run, err.message);
    }
    part.response.resolvedIp = resolved.address;
    part.response.ipFamily = resolved.family === 6 ? 'IPv6' : 'IPv4';
    part.timingPhases.dns = roundMs(resolved.durationMs);
    if (request.ipFamily === 'IPv6' && resolved.family === 4 && isIP(host) === 0) {
      logs.add('WARN', `${host} has no IPv6 address; falling back to IPv4`);
    }

    let channel: GrpcChannel;
    try {
      channel = new GrpcChannel({
        address: resolved.address,
        port,
        host,
        tls: config.tls,
        skipSSL: request.skipSSL,
        extraCa: this.#extraCa,
        maxReceiveBytes: this.#maxResponseBytes,
      });
    } catch (err) {
      return fail(`cannot set up TLS: ${(err as Error).message}`);
    }
    try {
      const connectAt = performance.now();
      channel.connect();
      const deadline = () => Date.now() + Math.max(0, deadlineAt - performance.now());
      let call: { path: string; request: Buffer; schema: ProtoSchema | null };
      if (config.mode === 'HEALTH') {
        call = {
          path: `/${HEALTH_SERVICE}/Check`,
          request: encodeHealthCheckRequest(fill(config.service)),
          schema: null,
        };
      } else {
        let schema: ProtoSchema;
        if (config.protoContent.trim() !== '') {
          schema = { kind: 'proto', text: config.protoContent };
        } else {
          const reflectStart = performance.now();
          const reflected = await reflectDescriptors(channel, target.service, deadline(), context.signal);
          if (context.signal.aborted) throw abortedError(context.signal);
          part.timingPhases.reflection = roundMs(performance.now() - reflectStart);
          this.#connection(run, channel, connectAt);
          if ('error' in reflected) {
            return this.#unreachable(
              run,
              `no protoContent, and the message types could not be read by server reflection: ${channel.connectError ?? reflected.error}`,
            );
          }
          part.response.descriptorSource = 'reflection';
          logs.add(
            'INFO',
            `read ${reflected.files.length} file descriptors of ${target.service} by ${reflected.reflectionService}`,
          );
          schema = { kind: 'descriptors', files: reflected.files };
        }
        const encoded = await encodeOffThread(
          { schema, service: target.service, method: target.method, message },
          workTimeMs(deadlineAt),
        );
        if ('error' in encoded) return this.#unreachable(run, encoded.error);
        part.response.discoveredMethods = encoded.methods.map((m) => `${target.service}/${m}`);
        call = { path: encoded.path, request: Buffer.from(encoded.request), schema };
      }
      if (performance.now() >= deadlineAt) {
        return this.#unreachable(run, `timed out after ${request.timeout} s before the call`);
      }
      const sentAt = performance.now();
      const answer = await channel.unary(call.path, call.request, metadata, deadline(), context.signal);
      if (context.signal.aborted) throw abortedError(context.signal);
      this.#connection(run, channel, connectAt);
      return await this.#answered(run, answer, sentAt, call.schema, target);
    } finally {
      channel.close();
    }
  }

  /** Nothing shared to release (the proto workers end when idle). */
  async close(): Promise<void> {}

  /** Copies the connection's phases and TLS details into the result part. */
  #connection(run: Run, channel: GrpcChannel, connectAt: number): void {
    const { times } = channel;
    const phases = run.part.timingPhases;
    if (times.tcpConnectedAt !== null) {
      phases.connect = roundMs(times.tcpConnectedAt - (times.tcpStartedAt ?? connectAt));
    }
    if (times.secureAt !== null && times.tcpConnectedAt !== null)
      phases.tls = roundMs(times.secureAt - times.tcpConnectedAt);
    if (times.readyAt !== null) phases.ready = roundMs(times.readyAt - connectAt);
    if (channel.options.tls && (channel.certificate !== null || channel.tlsProtocol !== null)) {
      run.part.response.tls = { protocol: channel.tlsProtocol, certificate: channel.certificate };
    }
    if (times.tcpConnectedAt !== null && !run.connectedLogged) {
      run.connectedLogged = true;
      run.logs.add(
        'INFO',
        `connected to ${channel.options.address}:${channel.options.port} in ${phases.connect} ms`,
      );
    }
  }

  /** The call ended with a status: decode what came back and judge it. */
  async #answered(
    run: Run,
    answer: GrpcUnaryResult,
    sentAt: number,
    schema: ProtoSchema | null,
    target: { service: string; method: string },
  ): Promise<RunOutcome> {
    const { part, logs } = run;
    part.grpcStatusCode = part.response.grpcStatusCode = answer.code;
    const name = statusName(answer.code);
    const details = answer.details === name ? '' : answer.details.slice(0, 1024);
    part.response.grpcStatusMessage = details === '' ? name : `${name}: ${details}`;
    part.response.metadata = answer.metadata;
    if (answer.firstResponseAt !== null)
      part.timingPhases.firstResponse = roundMs(answer.firstResponseAt - sentAt);
    part.timingPhases.total = roundMs(answer.endedAt - run.t0);
    logs.add(
      answer.code === 0 ? 'INFO' : 'WARN',
      `${part.response.grpcMethod}: ${part.response.grpcStatusMessage}`,
    );

    const jsonAssertions = run.assertions.filter((a) => a.source === 'JSON_RESPONSE');
    let jsonResults: AssertionResult[] | null = null;
    let document: unknown = null;
    const failures: string[] = [];
    if (answer.response !== null && schema === null) {
      try {
        const status = decodeHealthCheckResponse(answer.response);
        const label = HEALTH_STATUS_LABELS[status] ?? `STATUS_${status}`;
        part.healthStatus = part.response.healthStatus = status;
        part.response.healthStatusLabel = label;
        document = { status: label };
        part.response.responseMessage = JSON.stringify(document);
        if (status !== 1) failures.push(`health status ${label}`);
      } catch (err) {
        if (!(err instanceof WireFormatError)) throw err;
        failures.push(`the health response is malformed (${err.message})`);
      }
    } else if (answer.response !== null && schema !== null) {
      const decoded = await decodeOffThread(
        {
          schema,
          service: target.service,
          method: target.method,
          bytes: new Uint8Array(answer.response),
          maxChars: GRPC_MAX_RESPONSE_CHARS,
          assertions: jsonAssertions,
        },
        // The call is over: decoding may take what is left of the job's budget, not of the call's timeout.
        workTimeMs(run.t0 + runBudgetMs(run.job.timeoutMs)),
      );
      if ('error' in decoded) {
        failures.push(decoded.error);
        jsonResults = jsonAssertions.map((a) => failedAssertion(a, decoded.error));
      } else {
        part.response.responseMessage = decoded.json;
        part.response.responseTruncated = decoded.truncated;
        jsonResults = decoded.assertions;
      }
    }
    const hasStatusAssertion = run.assertions.some((a) => a.source === 'GRPC_STATUS');
    if (answer.code !== 0 && !hasStatusAssertion) {
      failures.unshift(`status ${answer.code} ${part.response.grpcStatusMessage}`);
    }
    const here = evaluateAssertions(
      run.assertions.filter((a) => a.source !== 'JSON_RESPONSE' || jsonResults === null),
      {
        GRPC_STATUS: valueSource(answer.code),
        RESPONSE_TIME: valueSource(part.timingPhases.total),
        HEADERS: metadataSource(answer.metadata),
        JSON_RESPONSE: jsonPathSource(document),
      },
    ).results;
    const results = run.assertions.map(
      (a) =>
        (a.source === 'JSON_RESPONSE' && jsonResults !== null
          ? jsonResults
          : here
        ).shift() as AssertionResult,
    );
    const outcome = judgeRun({
      check: run.job.check,
      startedAt: run.startedAt,
      logs,
      responseTimeMs: part.timingPhases.total,
      unreachable: null,
      failures,
      assertions: { results, allPassed: results.every((r) => r.error === null) },
    });
    outcome.grpcCheckResult = part;
    return releaseOutcome(outcome, run.scrubber);
  }

  /** A run that ended before a status: FAILED with `reason` as its request error. */
  #unreachable(run: Run, reason: string): RunOutcome {
    const { part } = run;
    part.requestError = part.response.requestError = reason;
    part.timingPhases.total = roundMs(performance.now() - run.t0);
    const assertions = evaluateAssertions(run.assertions, {
      GRPC_STATUS: valueSource(null),
      RESPONSE_TIME: valueSource(part.timingPhases.total),
      HEADERS: () => [],
      JSON_RESPONSE: jsonPathSource(null),
    });
    const outcome = judgeRun({
      check: run.job.check,
      startedAt: run.startedAt,
      logs: run.logs,
      responseTimeMs: part.timingPhases.total,
      unreachable: reason,
      failures: [],
      assertions,
    });
    outcome.grpcCheckResult = part;
    return releaseOutcome(outcome, run.scrubber);
  }
}

/** Time a proto task may take: PROTO_WORK_TIMEOUT_MS, or less to end by `endAt` (performance.now() ms); at least 1 ms. */
function workTimeMs(endAt: number): number {
  return Math.max(1, Math.min(PROTO_WORK_TIMEOUT_MS, Math.floor(endAt - performance.now())));
}

/** HEADERS assertion over response metadata: `property` names the key (case-insensitive); the first value counts. */
function metadataSource(entries: readonly { key: string; value: string }[]): AssertionSourceReader {
  return (assertion) => {
    const name = (assertion.property ?? '').toLowerCase();
    if (name === '') return [Object.fromEntries(entries.map((e) => [e.key, e.value]))];
    const found = entries.find((e) => e.key === name);
    return found ? [found.value] : [];
  };
}

function failedAssertion(assertion: Assertion, reason: string): AssertionResult {
  return {
    source: assertion.source,
    property: assertion.property ?? '',
    comparison: assertion.comparison,
    target: assertion.target ?? '',
    regex: assertion.regex ?? null,
    actual: null,
    error: reason,
  };
}

/** Creates the gRPC executor (see GrpcExecutorOptions). */
export function createGrpcExecutor(options: GrpcExecutorOptions = {}): GrpcExecutor {
  return new GrpcExecutor(options);
}
