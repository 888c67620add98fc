import { formatDateTime, formatMs } from '../ui/format.js';
import type { CheckResult } from '../api/schemas.js';
import {
  Facts,
  Heading,
  HeaderTable,
  type HeadingLevel,
  LongText,
  PassMark,
  below,
  formatOffset,
  ScrollRegion,
} from './text.js';

/** The HTTP part of a URL monitor's or an API check's result (docs/checks.md, "HTTP timing"). */
export type HttpPart = NonNullable<CheckResult['httpCheckResult']>;
/** The phase durations of the final request, ms (`wait`, `dns`, `tcp`, `tls`, `firstByte`, `download`, `total`). */
type HttpPhases = HttpPart['timingPhases'];
/** A server certificate as URL checks and browser checks' `sslCertificate` report it. */
export type Certificate = NonNullable<HttpPart['certificate']>;

type PhaseKey = Exclude<keyof HttpPhases, 'total'>;

/** The phases in the order they happen, with the words the waterfall shows. */
const PHASES: readonly { key: PhaseKey; label: string }[] = [
  { key: 'wait', label: 'Socket wait' },
  { key: 'dns', label: 'DNS lookup' },
  { key: 'tcp', label: 'TCP connect' },
  { key: 'tls', label: 'TLS handshake' },
  { key: 'firstByte', label: 'Waiting for first byte' },
  { key: 'download', label: 'Content download' },
];

/** One bar of the waterfall: where it starts and how long it lasts (ms), or why it has none. */
type WaterfallRow = {
  key: PhaseKey;
  label: string;
  startMs: number;
  durationMs: number | null;
  /** For a phase without a duration: skipped (a later phase ran) or never reached (the request stopped). */
  missing: 'not used' | 'not reached' | null;
};

/**
 * The waterfall of a request's phases: each phase starts where the phases before it ended (the phases are
 * consecutive durations). A phase without a duration is `not used` when a later phase has one (plain HTTP
 * has no TLS, an IP address no DNS lookup) and `not reached` when the request stopped before it.
 * `scaleMs` is the longest of the total and the sum of the phases, so no bar runs past the axis.
 */
function waterfallOf(phases: HttpPhases): { rows: WaterfallRow[]; scaleMs: number } {
  let at = 0;
  const rows: WaterfallRow[] = PHASES.map(({ key, label }, index) => {
    const duration = phases[key];
    const startMs = at;
    if (typeof duration === 'number' && Number.isFinite(duration)) {
      at += Math.max(0, duration);
      return { key, label, startMs, durationMs: Math.max(0, duration), missing: null };
    }
    const later = PHASES.slice(index + 1).some((p) => typeof phases[p.key] === 'number');
    return { key, label, startMs, durationMs: null, missing: later ? 'not used' : 'not reached' };
  });
  // Socket wait of zero (a fresh socket) is noise: leave it out.
  const shown = rows.filter((r) => !(r.key === 'wait' && (r.durationMs === null || r.durationMs === 0)));
  return { rows: shown, scaleMs: Math.max(phases.total ?? 0, at, 0) };
}

/** Percent of `scale`, kept inside 0–100. */
function percent(value: number, scale: number): number {
  if (scale <= 0) return 0;
  return Math.min(100, Math.max(0, (value / scale) * 100));
}

/**
 * The timing waterfall: a table (phase, start, duration) whose last column draws each phase as a bar
 * offset by its start. The bars repeat the numbers beside them, so they are hidden from screen readers.
 */
function Waterfall({ phases }: { phases: HttpPhases }) {
  const { rows, scaleMs } = waterfallOf(phases);
  return (
    <ScrollRegion label="Timing of the final request, by phase">
      <table class="rv-waterfall">
        <caption class="visually-hidden">Timing of the final request, by phase</caption>
        <thead>
          <tr>
            <th scope="col">Phase</th>
            <th scope="col" class="num">
              Starts at
            </th>
            <th scope="col" class="num">
              Duration
            </th>
            <th scope="col" class="rv-waterfall-bar-col">
              Timeline
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key}>
              <th scope="row">{row.label}</th>
              <td class="num">{row.durationMs === null ? '—' : formatOffset(row.startMs)}</td>
              <td class="num">{row.durationMs === null ? row.missing : formatMs(row.durationMs)}</td>
              <td class="rv-waterfall-track" aria-hidden="true">
                {row.durationMs !== null ? (
                  <span
                    class={`rv-waterfall-bar rv-phase-${row.key}`}
                    style={{
                      marginLeft: `${percent(row.startMs, scaleMs)}%`,
                      width: `${Math.max(percent(row.durationMs, scaleMs), 0.4)}%`,
                    }}
                  />
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr class="rv-waterfall-total">
            <th scope="row">Total</th>
            <td class="num">{formatOffset(0)}</td>
            <td class="num">{formatMs(phases.total)}</td>
            <td class="rv-waterfall-track" aria-hidden="true">
              <span
                class="rv-waterfall-bar rv-phase-total"
                style={{ width: `${percent(phases.total, scaleMs)}%` }}
              />
            </td>
          </tr>
        </tfoot>
      </table>
    </ScrollRegion>
  );
}

/** A certificate's subject, issuer, validity and verification, as facts. */
export function CertificateFacts({ certificate }: { certificate: Certificate }) {
  const expired = certificate.daysRemaining < 0;
  return (
    <>
      <Facts
        facts={[
          {
            term: 'Verified',
            value: (
              <PassMark
                ok={certificate.authorized}
                okText="Trusted, host name matches"
                badText={`Not trusted${certificate.authorizationError ? `: ${certificate.authorizationError}` : ''}`}
              />
            ),
          },
          {
            term: 'Days remaining',
            value: (
              <PassMark
                ok={!expired}
                okText={String(certificate.daysRemaining)}
                badText={`Expired ${-certificate.daysRemaining} days ago`}
              />
            ),
          },
          { term: 'Subject', value: nameOf(certificate.subject) },
          { term: 'Issuer', value: nameOf(certificate.issuer) },
          { term: 'Valid from', value: formatDateTime(certificate.validFrom) },
          { term: 'Valid to', value: formatDateTime(certificate.validTo) },
          { term: 'Serial number', value: <span class="rv-mono rv-break">{certificate.serialNumber}</span> },
          {
            term: 'SHA-256 fingerprint',
            value: <span class="rv-mono rv-break">{certificate.fingerprint256}</span>,
          },
        ]}
      />
      {certificate.subjectAltNames?.length ? (
        <>
          <p class="rv-label">Subject alternative names</p>
          <ul class="rv-inline-list">
            {certificate.subjectAltNames.map((name) => (
              <li key={name} class="rv-mono">
                {name}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}

function nameOf(name: Certificate['subject']): string {
  const parts = [name.commonName, name.organization].filter((p): p is string => Boolean(p));
  return parts.length ? parts.join(', ') : '—';
}

/** The reason phrase a status code stands for, when the response gave none. */
function statusLine(statusCode: number, statusText: string): string {
  return statusText ? `${statusCode} ${statusText}` : String(statusCode);
}

/** Whether a headers map says the body is JSON. */
function isJson(headers: Record<string, string> | undefined): boolean {
  const type = headers?.['content-type'] ?? '';
  return /[/+]json\b/i.test(type);
}

/**
 * The HTTP part: the timing waterfall, the request as sent, the response (status, headers, body), the
 * redirects followed, the connection and the certificate. Credential header values arrive as `*****`
 * (the agent replaced them) and are shown as they are.
 */
export function HttpPartView({ part, level }: { part: HttpPart; level: HeadingLevel }) {
  const sub = below(level);
  const redirects = part.redirects ?? [];
  return (
    <section class="rv-part">
      <Heading level={level}>HTTP request</Heading>
      {part.errorCode ? (
        <p class="notice notice-error">
          The request failed with <code>{part.errorCode}</code>.
        </p>
      ) : null}

      {part.timingPhases ? (
        <>
          <Heading level={sub}>Timing</Heading>
          <Waterfall phases={part.timingPhases} />
        </>
      ) : null}
      <HttpRequestView request={part.request} level={sub} />

      {redirects.length > 0 ? (
        <>
          <Heading level={sub}>Redirects</Heading>
          <ol class="rv-redirects">
            {redirects.map((r, i) => (
              // Redirects may repeat a URL; their order is their identity.
              <li key={i}>
                <span class="rv-mono">{r.statusCode}</span> <span class="rv-mono rv-break">{r.url}</span>
              </li>
            ))}
          </ol>
        </>
      ) : null}
      <HttpResponseView response={part.response} requestUrl={part.request?.url} level={sub} />

      <ConnectionFacts part={part} level={sub} />

      {part.certificate ? (
        <>
          <Heading level={sub}>Certificate</Heading>
          <CertificateFacts certificate={part.certificate} />
        </>
      ) : null}
    </section>
  );
}

/** The request as sent: method, URL, headers and body. */
function HttpRequestView({ request, level: sub }: { request: HttpPart['request']; level: HeadingLevel }) {
  return (
    <>
      <Heading level={sub}>Request</Heading>
      {request ? (
        <>
          <p class="rv-request-line">
            <span class="rv-method">{request.method}</span>{' '}
            <span class="rv-mono rv-break">{request.url}</span>
          </p>
          {request.headers ? (
            <details class="rv-details">
              <summary>Request headers ({Object.keys(request.headers).length})</summary>
              <HeaderTable headers={request.headers} caption="Request headers" />
            </details>
          ) : null}
          {request.body !== undefined && request.body !== '' ? (
            <>
              <p class="rv-label">Request body</p>
              <LongText text={request.body} json={isJson(request.headers)} />
            </>
          ) : null}
        </>
      ) : (
        <p class="muted">The request was not recorded.</p>
      )}
    </>
  );
}

/** The response: status, final URL, body size, headers and body. */
function HttpResponseView({
  response,
  requestUrl,
  level: sub,
}: {
  response: HttpPart['response'];
  requestUrl: string | undefined;
  level: HeadingLevel;
}) {
  return (
    <>
      <Heading level={sub}>Response</Heading>
      {response ? (
        <>
          <Facts
            facts={[
              {
                term: 'Status',
                value: <span class="rv-mono">{statusLine(response.statusCode, response.statusText)}</span>,
              },
              response.url && response.url !== requestUrl
                ? { term: 'Answered by', value: <span class="rv-mono rv-break">{response.url}</span> }
                : null,
              {
                term: 'Body size',
                value: `${response.bodySizeBytes.toLocaleString()} bytes${response.bodyTruncated ? ' (reading stopped at the cap)' : ''}`,
              },
            ]}
          />
          <details class="rv-details">
            <summary>Response headers ({Object.keys(response.headers ?? {}).length})</summary>
            <HeaderTable headers={response.headers ?? {}} caption="Response headers" />
          </details>
          {response.body === undefined ? (
            <p class="muted">
              The response body is not stored for this check type (URL monitors never store it).
            </p>
          ) : (
            <>
              <p class="rv-label">Response body</p>
              {response.body === null ? (
                <p class="muted">A binary body: not stored.</p>
              ) : (
                <>
                  {response.bodyStoredTruncated ? (
                    <p class="muted">The agent stored only the beginning of this body.</p>
                  ) : null}
                  <LongText text={response.body} json={isJson(response.headers)} empty="Empty body." />
                </>
              )}
            </>
          )}
        </>
      ) : (
        <p class="muted">No response arrived.</p>
      )}
    </>
  );
}

/** The connection: resolved and connected address, IP family and resolver. */
function ConnectionFacts({ part, level: sub }: { part: HttpPart; level: HeadingLevel }) {
  return (
    <>
      <Heading level={sub}>Connection</Heading>
      <Facts
        facts={[
          { term: 'Resolved address', value: part.resolvedIp },
          part.connection
            ? {
                term: 'Connected to',
                value: (
                  <span class="rv-mono">
                    {part.connection.family === 6
                      ? `[${part.connection.remoteAddress}]:${part.connection.remotePort}`
                      : `${part.connection.remoteAddress}:${part.connection.remotePort}`}
                  </span>
                ),
              }
            : null,
          part.connection ? { term: 'IP family', value: `IPv${part.connection.family}` } : null,
          {
            term: 'Resolver',
            value: part.resolver === 'os' ? 'Operating system (getaddrinfo)' : 'DNS (name server)',
          },
        ]}
      />
    </>
  );
}
