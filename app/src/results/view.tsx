import { useState } from 'preact/hooks';
import { DETAILS_DROPPED_REASON } from '../../../src/protocol/enums.js';
import { formatBytes, formatDateTime, formatMs } from '../ui/format.js';
import type { CheckResult, CheckType, IcmpCheckResult, RunLog } from '../api/schemas.js';
import './results.css';
import { type Artifact, ArtifactsTable, ScreenshotsAndTraces } from './artifacts.js';
import { type AgenticPart, AgenticPartView } from './agentic.js';
import { type BrowserPart, BrowserPartView } from './browser.js';
import { type DnsPart, DnsPartView } from './dns.js';
import { type HttpPart, HttpPartView } from './http.js';
import { IcmpPartView } from './icmp.js';
import { type GrpcPart, GrpcPartView } from './grpc.js';
import { type TcpPart, TcpPartView } from './tcp.js';
import { type SslPart, SslPartView } from './ssl.js';
import { type TraceroutePart, TraceroutePartView } from './traceroute.js';
import { Facts, Heading, type HeadingLevel, PassMark, formatClock, ScrollRegion } from './text.js';
import { RunStatusBadge } from '../ui/status.js';

/** One evaluated assertion: source, property, comparison, target, the `actual` value and the `error`. */
type AssertionResult = CheckResult['assertions'][number];

/**
 * What a result view shows: the fields a check result (`GET /v1/check-results/{checkId}/{id}`) and a
 * check session's result share, and the check type's part. The parts are null or absent for the types
 * that have none; `assertions` is absent from a check session's results (the result page has them);
 * `truncated` is there when the agent cut the result to fit. Times ISO 8601, `responseTime` ms.
 */
type ResultData = {
  status: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  overMaxResponseTime?: boolean;
  responseTime: number;
  startedAt: string;
  stoppedAt: string;
  runLocation: string;
  /** The agent that ran it; null when the service wrote the result; absent in a session's results. */
  agent?: { id: string; version: string; hostName: string | null } | null;
  attempts: number;
  resultType: 'FINAL' | 'ATTEMPT';
  errorMessage: string | null;
  assertions?: readonly AssertionResult[];
  logs?: readonly RunLog[];
  artifacts: readonly Artifact[];
  truncated?: CheckResult['truncated'];
  icmpCheckResult?: IcmpCheckResult | null;
  dnsCheckResult?: DnsPart | null;
  tcpCheckResult?: TcpPart | null;
  grpcCheckResult?: GrpcPart | null;
  httpCheckResult?: HttpPart | null;
  browserCheckResult?: BrowserPart | null;
  /** A multi-step check's browser part, under the field's name for it (the same shape). */
  multiStepCheckResult?: BrowserPart | null;
  sslCheckResult?: SslPart | null;
  tracerouteCheckResult?: TraceroutePart | null;
  agenticCheckResult?: AgenticPart | null;
};

/** A check type in words: `Multi-step check`, `URL monitor`. */
export function checkTypeText(type: CheckType): string {
  const words: Record<CheckType, string> = {
    API: 'API check',
    URL: 'URL monitor',
    TCP: 'TCP check',
    DNS: 'DNS check',
    GRPC: 'gRPC monitor',
    ICMP: 'ICMP check',
    SSL: 'SSL monitor',
    TRACEROUTE: 'Traceroute monitor',
    BROWSER: 'Browser check',
    MULTI_STEP: 'Multi-step check',
    PLAYWRIGHT: 'Playwright check suite',
    HEARTBEAT: 'Heartbeat check',
    AGENTIC: 'Agentic check',
  };
  return words[type] ?? type;
}

/** How many log lines show before "Show all". */
const LOG_PREVIEW_LINES = 100;

const COMPARISON_WORDS: Record<string, string> = {
  EQUALS: 'equals',
  NOT_EQUALS: 'does not equal',
  GREATER_THAN: 'is greater than',
  LESS_THAN: 'is less than',
  CONTAINS: 'contains',
  NOT_CONTAINS: 'does not contain',
  IS_EMPTY: 'is empty',
  NOT_EMPTY: 'is not empty',
  IS_NULL: 'is null',
  NOT_NULL: 'is not null',
  HAS_KEY: 'has key',
  NOT_HAS_KEY: 'does not have key',
  HAS_VALUE: 'has value',
  NOT_HAS_VALUE: 'does not have value',
};

/** Comparisons that take no target. */
const NO_TARGET = new Set(['IS_EMPTY', 'NOT_EMPTY', 'IS_NULL', 'NOT_NULL']);

/** A comparison in words (`GREATER_THAN` → `is greater than`); an unknown one as it came. */
function comparisonWords(comparison: string): string {
  return COMPARISON_WORDS[comparison] ?? comparison;
}

/** An assertion's `actual` value as text: strings as they are, other values as JSON, null as "nothing found". */
function actualText(actual: AssertionResult['actual']): string {
  if (actual === null || actual === undefined) return 'nothing found';
  return typeof actual === 'string' ? actual : JSON.stringify(actual);
}

/** The assertions as a table: what was asserted, the value found, and passed or failed (text and glyph). */
function AssertionsTable({ assertions }: { assertions: readonly AssertionResult[] }) {
  const failed = assertions.filter((a) => a.error !== null && a.error !== undefined).length;
  return (
    <>
      <p class="rv-summary-line">
        {failed === 0 ? (
          <PassMark ok okText={`All ${assertions.length} assertions passed.`} />
        ) : (
          <PassMark ok={false} badText={`${failed} of ${assertions.length} assertions failed.`} />
        )}
      </p>
      <ScrollRegion label="Assertions and their outcome">
        <table class="rv-assertions">
          <caption class="visually-hidden">Assertions and their outcome</caption>
          <thead>
            <tr>
              <th scope="col">Result</th>
              <th scope="col">Source</th>
              <th scope="col">Property</th>
              <th scope="col">Comparison</th>
              <th scope="col">Target</th>
              <th scope="col">Actual</th>
            </tr>
          </thead>
          <tbody>
            {assertions.map((a, i) => {
              const ok = a.error === null || a.error === undefined;
              return (
                // Assertions may repeat; their order (the check's) is their identity.
                <tr key={i} class={ok ? undefined : 'rv-row-failed'}>
                  <td>
                    <PassMark ok={ok} />
                  </td>
                  <th scope="row" class="rv-mono">
                    {a.source}
                  </th>
                  <td class="rv-mono rv-break">
                    {a.property || <span class="muted">—</span>}
                    {a.regex ? <span class="rv-regex"> regex {a.regex}</span> : null}
                  </td>
                  <td>{comparisonWords(a.comparison)}</td>
                  <td class="rv-mono rv-break">
                    {NO_TARGET.has(a.comparison) ? <span class="muted">—</span> : a.target}
                  </td>
                  <td class="rv-break">
                    <span class={a.actual === null ? 'muted' : 'rv-mono'}>{actualText(a.actual)}</span>
                    {ok ? null : <span class="rv-assertion-error">{a.error}</span>}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollRegion>
    </>
  );
}

const LEVEL_CLASSES: Record<RunLog['level'], string> = {
  DEBUG: 'rv-log-debug',
  INFO: 'rv-log-info',
  WARN: 'rv-log-warn',
  ERROR: 'rv-log-error',
};

/** The run's log lines (time, level as text, message), the first {@link LOG_PREVIEW_LINES} until "Show all". */
function LogsTable({ logs }: { logs: readonly RunLog[] }) {
  const [all, setAll] = useState(false);
  const shown = all ? logs : logs.slice(0, LOG_PREVIEW_LINES);
  return (
    <>
      <ScrollRegion label="Log lines of the run">
        <table class="rv-logs">
          <caption class="visually-hidden">Log lines of the run</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Level</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((line, i) => (
              // Log lines repeat; their order is their identity.
              <tr key={i}>
                <td class="rv-mono rv-nowrap">
                  <time dateTime={line.time}>{formatClock(line.time)}</time>
                </td>
                <td class={`rv-log-level ${LEVEL_CLASSES[line.level] ?? ''}`}>{line.level}</td>
                <td class="rv-log-msg">{line.msg}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      {logs.length > LOG_PREVIEW_LINES ? (
        <div class="rv-text-actions">
          <span class="muted">
            {all
              ? `${logs.length.toLocaleString()} lines.`
              : `Showing the first ${LOG_PREVIEW_LINES} of ${logs.length.toLocaleString()} lines.`}
          </span>
          <button type="button" class="button-secondary" onClick={() => setAll(!all)}>
            {all ? 'Show less' : 'Show all'}
          </button>
        </div>
      ) : null}
    </>
  );
}

/** A result type in words. */
export function resultTypeText(resultType: string, attempts: number): string {
  if (resultType === 'ATTEMPT') return 'Attempt, retried after it failed';
  return attempts > 1
    ? `Final result, after ${attempts - 1} ${attempts === 2 ? 'retry' : 'retries'}`
    : 'Final result';
}

/**
 * The body of one result, shared by the result page and the check session page: its facts (status,
 * times, response time, run location, attempt, result type), the error, a notice when the agent
 * truncated it, the assertions, the check type's part (HTTP waterfall, request and response; ping; DNS;
 * TCP; browser run), screenshots and traces, logs and artifacts. Sections start at heading `level` (2
 * on the result page, 3 under a location's heading in a check session). `checkId` and `resultId` build
 * the artifact links. Everything from the result is rendered as text.
 */
export function ResultView({
  result,
  checkId,
  resultId,
  level,
}: {
  result: ResultData;
  checkId: string;
  resultId: string;
  level: HeadingLevel;
}) {
  const browser = result.browserCheckResult ?? result.multiStepCheckResult ?? null;
  const artifacts = result.artifacts ?? [];
  const logs = result.logs ?? [];
  return (
    <div class="rv">
      <ResultFacts result={result} />

      <ResultErrors result={result} />

      {result.assertions !== undefined &&
      // Only the types that take assertions (API, URL, TCP, DNS, ICMP) say when they have none.
      (result.assertions.length > 0 ||
        result.httpCheckResult ||
        result.tcpCheckResult ||
        result.grpcCheckResult ||
        result.dnsCheckResult ||
        result.icmpCheckResult ||
        result.sslCheckResult ||
        result.tracerouteCheckResult) ? (
        <section class="rv-part">
          <Heading level={level}>Assertions</Heading>
          {result.assertions.length > 0 ? (
            <AssertionsTable assertions={result.assertions} />
          ) : (
            <p class="muted">The check has no assertions.</p>
          )}
        </section>
      ) : null}

      {result.httpCheckResult ? <HttpPartView part={result.httpCheckResult} level={level} /> : null}
      {result.icmpCheckResult ? <IcmpPartView part={result.icmpCheckResult} level={level} /> : null}
      {result.dnsCheckResult ? <DnsPartView part={result.dnsCheckResult} level={level} /> : null}
      {result.tcpCheckResult ? <TcpPartView part={result.tcpCheckResult} level={level} /> : null}
      {result.grpcCheckResult ? <GrpcPartView part={result.grpcCheckResult} level={level} /> : null}
      {result.sslCheckResult ? <SslPartView part={result.sslCheckResult} level={level} /> : null}
      {result.tracerouteCheckResult ? (
        <TraceroutePartView part={result.tracerouteCheckResult} level={level} />
      ) : null}
      {result.agenticCheckResult ? <AgenticPartView part={result.agenticCheckResult} level={level} /> : null}
      {browser ? <BrowserPartView part={browser} level={level} /> : null}

      <ScreenshotsAndTraces artifacts={artifacts} checkId={checkId} resultId={resultId} level={level} />

      <section class="rv-part">
        <Heading level={level}>Logs</Heading>
        {logs.length > 0 ? <LogsTable logs={logs} /> : <p class="muted">The run logged nothing.</p>}
      </section>

      <section class="rv-part">
        <Heading level={level}>Artifacts</Heading>
        {artifacts.length > 0 ? (
          <ArtifactsTable artifacts={artifacts} checkId={checkId} resultId={resultId} />
        ) : (
          <p class="muted">No file was uploaded with this result.</p>
        )}
      </section>
    </div>
  );
}

/** The result's status, response time, run location, times, attempt and result type. */
function ResultFacts({ result }: { result: ResultData }) {
  return (
    <Facts
      facts={[
        { term: 'Status', value: <RunStatusBadge status={result.status} /> },
        {
          term: 'Response time',
          value: (
            <>
              {formatMs(result.responseTime)}
              {result.overMaxResponseTime ? (
                <span class="rv-over">
                  <span aria-hidden="true"> ✕</span> over the maximum response time
                </span>
              ) : null}
            </>
          ),
        },
        { term: 'Run location', value: <span class="rv-mono">{result.runLocation}</span> },
        ...(result.agent
          ? [
              {
                term: 'Run by',
                value: (
                  <span title={`agent ${result.agent.id}`}>
                    {result.agent.hostName ?? 'an agent'}{' '}
                    <span class="muted">
                      (agent {result.agent.version},{' '}
                      <span class="rv-mono">{result.agent.id.slice(0, 8)}</span>)
                    </span>
                  </span>
                ),
              },
            ]
          : []),
        {
          term: 'Started',
          value: <time dateTime={result.startedAt}>{formatDateTime(result.startedAt)}</time>,
        },
        {
          term: 'Stopped',
          value: <time dateTime={result.stoppedAt}>{formatDateTime(result.stoppedAt)}</time>,
        },
        { term: 'Attempt', value: String(result.attempts) },
        { term: 'Result type', value: resultTypeText(result.resultType, result.attempts) },
      ]}
    />
  );
}

/** Why the run failed (an error of the agent or of the check), and what the agent truncated. */
function ResultErrors({ result }: { result: ResultData }) {
  return (
    <>
      {result.hasErrors ? (
        <div class="notice notice-error">
          <strong>The agent could not run the check</strong>
          {result.errorMessage ? <p class="rv-error-text">{result.errorMessage}</p> : null}
        </div>
      ) : result.errorMessage ? (
        <div class="notice notice-error">
          <strong>Error</strong>
          <p class="rv-error-text">{result.errorMessage}</p>
        </div>
      ) : null}

      {result.truncated ? (
        <div class="notice">
          <strong>This result was truncated</strong>
          {result.truncated.reason.startsWith(DETAILS_DROPPED_REASON) ? (
            <p>
              A passing run's logs, bodies and most headers are kept for a while only (
              <code>OUTPOST_PASSING_DETAIL_HOURS</code>); this run is older, so the service dropped them. Its
              status, timings and assertions are all here. It was{' '}
              {formatBytes(result.truncated.originalSizeBytes)}.
            </p>
          ) : (
            <p>
              The agent cut it to fit the service's size limit ({result.truncated.reason}; it was{' '}
              {formatBytes(result.truncated.originalSizeBytes)}). Cut texts end with “…[truncated N bytes]”.
            </p>
          )}
          {result.truncated.fields.length > 0 ? (
            <p>
              Fields cut:{' '}
              {result.truncated.fields.map((f, i) => (
                <span key={f}>
                  {i > 0 ? ', ' : ''}
                  <code>{f}</code>
                </span>
              ))}
            </p>
          ) : null}
        </div>
      ) : null}
    </>
  );
}
