import type { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { checkServerIdentity, type DetailedPeerCertificate } from 'node:tls';
import { abortedError } from '../../common/abort.js';
import { roundMs } from '../../common/clock.js';
import { summarizeCertificate } from '../../net/http/certificate.js';
import { createDnsResolver, ResolveError, type ResolvedAddress, resolveHost } from '../../net/resolve.js';
import { handshakeTls } from '../../net/tls-probe.js';
import {
  type Assertion,
  type Job,
  type RunOutcome,
  SSL_ASSERTION_SOURCES,
  type SslCheckResult,
  type SslRequest,
  SslRequestSchema,
  type SslResponse,
} from '../../protocol/index.js';
import { compileRegex, propertySource, valueSource } from '../assertions/index.js';
import { evaluateAssertionsWithJsonPath } from '../assertions/off-thread.js';
import type { Executor, ExecutorContext } from '../executor.js';
import {
  assertionFailures,
  errorRunOutcome,
  explainStatus,
  runScrubbed,
  validateRequest,
} from '../outcome.js';
import type { RunLogRecorder } from '../run-log.js';
import { decideStatus } from '../status.js';
import { runBudgetMs } from '../time-budget.js';
import { chainOf, describeCertificate, judgeBaseline, responseText, tlsVersionNumber } from './inspect.js';

/** Options of the SSL executor. */
export type SslExecutorOptions = {
  /** Resolve with the OS resolver (getaddrinfo) instead of querying DNS (`USE_OS_DNS_RESOLVER`). Default false. */
  useOsDnsResolver?: boolean;
  /** Name servers to query instead of /etc/resolv.conf's (`"127.0.0.1:5353"`); ignored with useOsDnsResolver. */
  dnsServers?: readonly string[];
  /**
   * CA certificates (PEM) the chain is verified against instead of Node's bundled roots (with
   * NODE_EXTRA_CA_CERTS): tests trust their own CA with it. Default: Node's roots.
   */
  trustedCas?: readonly string[];
  /** The wall clock, ms since the epoch, days until expiry count from; tests move it. Default Date.now. */
  now?: () => number;
};

/** What the handshake read off the socket before it was destroyed. */
type Reading = {
  peer: DetailedPeerCertificate;
  protocol: string | null;
  cipherSuite: string | null;
  authorized: boolean;
  authorizationError: string | null;
  summary: ReturnType<typeof summarizeCertificate>;
};

/** OpenSSL's chain codes that mean "not valid yet" and "expired". */
const NOT_YET_VALID = new Set(['CERT_NOT_YET_VALID']);
const EXPIRED = new Set(['CERT_HAS_EXPIRED']);

/**
 * Runs SSL monitors (docs/checks.md, "SSL"): resolves `sslConfig.hostname`, makes one TLS handshake with it
 * (SNI `serverName`, else the hostname when it is a name; an OCSP staple asked for) within
 * `handshakeTimeoutMs`, and reports the chain, protocol, cipher suite, days until expiry, whether the chain
 * is trusted and the name matches, the stapled OCSP response and the security baseline's verdict. A run
 * FAILS on an expired or not-yet-valid leaf, an untrusted chain (unless `skipChainValidation`), a name
 * mismatch, a baseline rule of severity `fail`, a failed assertion or `maxResponseTime` (the handshake's
 * time); it is DEGRADED within `alertDaysBeforeExpiry` days of expiry, on a baseline rule of severity
 * `degrade` or at `degradedResponseTime`.
 */
export class SslExecutor implements Executor {
  readonly checkType = 'SSL' as const;
  readonly #useOs: boolean;
  readonly #resolver: Resolver | undefined;
  readonly #ca: readonly string[] | undefined;
  readonly #now: () => number;

  constructor(options: SslExecutorOptions = {}) {
    this.#useOs = options.useOsDnsResolver ?? false;
    this.#resolver = options.dnsServers ? createDnsResolver({ servers: options.dnsServers }) : undefined;
    this.#ca = options.trustedCas;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Runs one SSL job. Never throws for a malformed job (→ `hasErrors`) or an unreachable or bad target
   * (→ FAILED with the reason). Throws OUTPOST_ERR_ABORTED when `context.signal` aborts.
   */
  async run(job: Job, context: ExecutorContext): Promise<RunOutcome> {
    // Secret variables are scrubbed from everything the run reports; agent-log lines are written scrubbed at the end.
    return runScrubbed(job, context, (logs) => this.#run(job, context, logs));
  }

  async #run(job: Job, context: ExecutorContext, logs: RunLogRecorder): Promise<RunOutcome> {
    const startedAt = new Date();
    const t0 = performance.now();
    if (job.check.checkType !== 'SSL') {
      return errorRunOutcome(startedAt, logs, `check type ${job.check.checkType} is not SSL`);
    }
    const plan = validateRequest('SSL', SslRequestSchema, job.check.request, SSL_ASSERTION_SOURCES);
    if ('problem' in plan) return errorRunOutcome(startedAt, logs, plan.problem);
    const { request } = plan;
    const config = request.sslConfig;
    const literal = isIP(config.hostname.replace(/^\[(.*)\]$/, '$1')) !== 0;
    const servername = config.serverName ?? (literal ? null : config.hostname);
    const part: SslCheckResult = {
      tlsVersion: null,
      cipherSuite: null,
      daysUntilExpiry: null,
      handshakeTimeMs: null,
      chainTrusted: null,
      hostnameVerified: null,
      baselineVerdict: null,
      failureCategory: null,
      requestError: null,
      request: {
        hostname: config.hostname,
        port: config.port,
        serverName: servername,
        ipFamily: config.ipFamily,
      },
      timingPhases: { dns: 0, connect: null, handshake: null, total: 0 },
      response: null,
      sslCertificate: null,
    };
    const deadline = t0 + runBudgetMs(job.timeoutMs);

    let resolved: ResolvedAddress;
    try {
      resolved = await resolveHost(config.hostname, {
        ipFamily: config.ipFamily,
        useOsDnsResolver: this.#useOs,
        signal: context.signal,
        resolver: this.#resolver,
      });
    } catch (err) {
      if (!(err instanceof ResolveError)) throw err;
      return this.#unreachable(job, request, part, { startedAt, logs, t0 }, err.message);
    }
    part.timingPhases.dns = roundMs(resolved.durationMs);

    const timeoutMs = Math.max(1, Math.min(config.handshakeTimeoutMs, deadline - performance.now()));
    const target = `${config.hostname}:${config.port}`;
    const handshake = await handshakeTls(
      {
        host: resolved.address,
        port: config.port,
        servername,
        timeoutMs,
        signal: context.signal,
        requestOCSP: true,
        label: resolved.address === config.hostname ? target : `${target} (${resolved.address})`,
        ...(this.#ca ? { ca: this.#ca } : {}),
      },
      (socket): Reading => {
        const error = socket.authorizationError as unknown;
        return {
          peer: socket.getPeerCertificate(true),
          protocol: socket.getProtocol(),
          cipherSuite: socket.getCipher()?.standardName ?? null,
          authorized: socket.authorized,
          authorizationError:
            error === null || error === undefined ? null : String((error as { code?: string }).code ?? error),
          summary: summarizeCertificate(socket, this.#now()),
        };
      },
    );
    if (context.signal.aborted) throw abortedError(context.signal);
    if ('error' in handshake) {
      return this.#unreachable(job, request, part, { startedAt, logs, t0 }, handshake.error);
    }
    const reading = handshake.read;
    const nowMs = this.#now();
    part.timingPhases.connect = roundMs(handshake.connectMs);
    part.timingPhases.handshake = roundMs(handshake.handshakeMs);
    if (Object.keys(reading.peer).length === 0 || reading.summary === null) {
      return this.#unreachable(
        job,
        request,
        part,
        { startedAt, logs, t0 },
        `${target} completed the TLS handshake without a certificate`,
      );
    }
    const checkedName = servername ?? config.hostname.replace(/^\[(.*)\]$/, '$1');
    const mismatch = checkServerIdentity(checkedName, reading.peer);
    const leaf = describeCertificate(reading.peer, nowMs);
    const response: SslResponse = {
      resolvedIp: handshake.remoteAddress ?? resolved.address,
      protocol: reading.protocol,
      cipherSuite: reading.cipherSuite,
      handshakeTimeMs: roundMs(handshake.handshakeMs),
      hostnameVerified: mismatch === undefined,
      hostnameError: mismatch === undefined ? null : mismatch.message,
      chainTrusted: reading.authorized,
      chainError: reading.authorized ? null : reading.authorizationError,
      daysUntilExpiry: leaf.daysUntilExpiry,
      ocspStapled: handshake.ocspResponse !== null,
      ocspResponseBytes: handshake.ocspResponse?.length ?? null,
      securityBaseline: judgeBaseline(config.securityBaseline, {
        protocol: reading.protocol,
        cipherSuite: reading.cipherSuite,
        leafKeyBits: leaf.keySizeBits,
      }),
      certificate: leaf,
      chain: chainOf(reading.peer, nowMs),
    };
    part.response = response;
    part.tlsVersion = response.protocol;
    part.cipherSuite = response.cipherSuite;
    part.daysUntilExpiry = response.daysUntilExpiry;
    part.handshakeTimeMs = response.handshakeTimeMs;
    part.chainTrusted = response.chainTrusted;
    part.hostnameVerified = response.hostnameVerified;
    part.baselineVerdict = response.securityBaseline?.verdict ?? null;
    part.sslCertificate = {
      ...reading.summary,
      authorized: response.chainTrusted && response.hostnameVerified,
      authorizationError: response.chainError ?? (mismatch ? 'ERR_TLS_CERT_ALTNAME_INVALID' : null),
    };
    part.timingPhases.total = roundMs(performance.now() - t0);
    logs.add(
      'INFO',
      `${response.protocol ?? 'TLS'} handshake with ${target} in ${response.handshakeTimeMs} ms: ${response.cipherSuite ?? 'unknown cipher'}, ${leaf.daysUntilExpiry} days until expiry`,
    );

    const failures: string[] = [];
    const degradations: string[] = [];
    const validFromMs = Date.parse(leaf.validFrom);
    if (leaf.daysUntilExpiry < 0 || EXPIRED.has(response.chainError ?? '')) {
      failures.push(`the certificate expired on ${leaf.validTo}`);
      part.failureCategory = 'expired';
    } else if (validFromMs > nowMs || NOT_YET_VALID.has(response.chainError ?? '')) {
      failures.push(`the certificate is not valid before ${leaf.validFrom}`);
      part.failureCategory = 'not-yet-valid';
    }
    if (!response.chainTrusted && !config.skipChainValidation && part.failureCategory === null) {
      failures.push(`the certificate chain is not trusted: ${response.chainError ?? 'unknown reason'}`);
      part.failureCategory = 'untrusted';
    }
    if (!response.hostnameVerified) {
      failures.push(`the certificate does not match ${checkedName}: ${response.hostnameError}`);
      part.failureCategory ??= 'hostname-mismatch';
    }
    for (const finding of response.securityBaseline?.findings ?? []) {
      const line = `security baseline ${finding.rule}: ${finding.message}`;
      if (finding.severity === 'fail') failures.push(line);
      else degradations.push(line);
      part.failureCategory ??= 'baseline';
    }
    if (
      failures.length === 0 &&
      config.alertDaysBeforeExpiry > 0 &&
      leaf.daysUntilExpiry <= config.alertDaysBeforeExpiry
    ) {
      degradations.push(
        `the certificate expires in ${leaf.daysUntilExpiry} days, within alertDaysBeforeExpiry ${config.alertDaysBeforeExpiry}`,
      );
      part.failureCategory ??= 'expiring';
    }
    return this.#judge(job, request, part, { startedAt, logs, failures, degradations });
  }

  /** Nothing shared to release. */
  async close(): Promise<void> {}

  #unreachable(
    job: Job,
    request: SslRequest,
    part: SslCheckResult,
    run: { startedAt: Date; logs: RunLogRecorder; t0: number },
    reason: string,
  ): Promise<RunOutcome> {
    part.requestError = reason;
    part.failureCategory = 'connection';
    part.timingPhases.total = roundMs(performance.now() - run.t0);
    return this.#judge(job, request, part, {
      ...run,
      failures: [reason],
      degradations: [],
      unreachable: true,
    });
  }

  async #judge(
    job: Job,
    request: SslRequest,
    part: SslCheckResult,
    run: {
      startedAt: Date;
      logs: RunLogRecorder;
      failures: string[];
      degradations: string[];
      unreachable?: boolean;
    },
  ): Promise<RunOutcome> {
    const { check } = job;
    const assertions = await this.#assertions(request.assertions, part);
    const rt = part.handshakeTimeMs;
    const decision = decideStatus({
      failed: run.failures.length > 0 || !assertions.allPassed,
      responseTimeMs: run.unreachable ? null : rt,
      degradedResponseTimeMs: check.degradedResponseTime,
      maxResponseTimeMs: check.maxResponseTime,
      shouldFail: check.shouldFail,
    });
    const failures = [...run.failures];
    if (decision.overMaxResponseTime) {
      failures.push(`handshake time ${rt} ms is at or above maxResponseTime ${check.maxResponseTime} ms`);
    }
    failures.push(...assertionFailures(assertions.results));
    const degradations = [...run.degradations];
    if (rt !== null && check.degradedResponseTime !== null && rt >= check.degradedResponseTime) {
      degradations.push(
        `handshake time ${rt} ms is at or above degradedResponseTime ${check.degradedResponseTime} ms`,
      );
    }
    let { status, isDegraded } = decision;
    if (status === 'PASSED' && !check.shouldFail && degradations.length > 0) {
      status = 'DEGRADED';
      isDegraded = true;
    }
    const errorMessage = explainStatus(status, check.shouldFail, failures, run.logs, degradations);
    return {
      status,
      hasFailures: decision.hasFailures,
      hasErrors: false,
      isDegraded,
      overMaxResponseTime: decision.overMaxResponseTime,
      responseTime: rt ?? part.timingPhases.total,
      startedAt: run.startedAt.toISOString(),
      stoppedAt: new Date().toISOString(),
      errorMessage,
      assertions: assertions.results,
      logs: run.logs.lines,
      sslCheckResult: part,
    };
  }

  /**
   * The SSL assertions (docs/checks.md, "SSL"): CERTIFICATE and CONNECTION fields by `property`, the
   * handshake time, a JSONPath over `response` (in an assertion worker), a regex over it as text.
   * CONNECTION `tlsVersion` compares version numbers (`TLSv1.3`, `TLS 1.3`, `TLS1.3` are one version).
   */
  async #assertions(assertions: Assertion[], part: SslCheckResult) {
    const response = part.response;
    const leaf = response?.certificate ?? null;
    const issuer = response?.chain[1] ?? null;
    const certificate: Record<string, unknown> = {
      daysUntilExpiry: leaf?.daysUntilExpiry ?? null,
      keySizeBits: leaf?.keySizeBits ?? null,
      subjectCN: leaf?.subjectCN ?? null,
      issuerCN: leaf?.issuerCN ?? null,
      serialNumber: leaf?.serialNumber ?? null,
      fingerprintSha256: leaf?.fingerprintSha256 ?? null,
      issuerFingerprintSha256: issuer?.fingerprintSha256 ?? null,
      keyAlgorithm: leaf?.keyAlgorithm ?? null,
      sans: leaf?.sans ?? [],
      selfSigned: leaf?.selfSigned ?? null,
      isCA: leaf?.isCA ?? null,
      validFrom: leaf?.validFrom ?? null,
      validTo: leaf?.validTo ?? null,
    };
    const connection: Record<string, unknown> = {
      tlsVersion: response?.protocol ? tlsVersionNumber(response.protocol) : null,
      cipherSuite: response?.cipherSuite ?? null,
      resolvedIp: response?.resolvedIp ?? null,
      hostnameVerified: response?.hostnameVerified ?? null,
      chainTrusted: response?.chainTrusted ?? null,
      ocspStapled: response?.ocspStapled ?? null,
    };
    const text = response ? responseText(response) : (part.requestError ?? '');
    // tlsVersion is compared as a number: the target is read the same way.
    const rewritten = assertions.map((a) => {
      if (a.source !== 'CONNECTION' || a.property !== 'tlsVersion' || a.target === undefined) return a;
      const version = tlsVersionNumber(a.target);
      return version === null ? a : { ...a, target: String(version) };
    });
    const outcome = await evaluateAssertionsWithJsonPath(
      rewritten,
      {
        CERTIFICATE: propertySource(certificate),
        CONNECTION: propertySource(connection),
        RESPONSE_TIME: valueSource(part.handshakeTimeMs),
        TEXT_RESPONSE: (assertion) => {
          const pattern = assertion.property ?? '';
          if (pattern === '') return [text];
          const regex = compileRegex(pattern);
          const matcher = regex.matcher(text);
          if (!matcher.find()) return [regex.groupCount() >= 1 ? null : false];
          return [regex.groupCount() >= 1 ? matcher.group(1) : true];
        },
      },
      'JSON_RESPONSE',
      response ?? {},
    );
    // Report each assertion's target as the check has it.
    for (const [index, result] of outcome.results.entries()) result.target = assertions[index]?.target ?? '';
    return outcome;
  }
}

/** Creates the SSL executor (see SslExecutorOptions). */
export function createSslExecutor(options: SslExecutorOptions = {}): SslExecutor {
  return new SslExecutor(options);
}
