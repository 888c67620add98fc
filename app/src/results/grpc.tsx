import { formatMs } from '../ui/format.js';
import type { CheckResult } from '../api/schemas.js';
import { CertificateFacts } from './http.js';
import {
  Facts,
  HeaderTable,
  Heading,
  type HeadingLevel,
  LongText,
  PassMark,
  below,
  ScrollRegion,
} from './text.js';

/** The gRPC part of a result (docs/checks.md, "gRPC"). */
export type GrpcPart = NonNullable<CheckResult['grpcCheckResult']>;

/** Where the message types came from, in words. */
const DESCRIPTOR_SOURCES: Record<string, string> = {
  protoContent: 'The check’s proto definition',
  reflection: 'The server’s reflection',
  builtIn: 'Built in (health check)',
};

/**
 * The gRPC part: the method called and where, the status (and the health status), the connection's
 * phases, the TLS certificate, the response message as JSON and the response metadata.
 */
export function GrpcPartView({ part, level }: { part: GrpcPart; level: HeadingLevel }) {
  const sub = below(level);
  const response = part.response;
  const phases = part.timingPhases;
  const rows: [string, number | null][] = [
    ['DNS lookup', phases.dns],
    ['TCP connect', phases.connect],
    ['TLS handshake', phases.tls],
    ['Connection ready (HTTP/2)', phases.ready],
    ['Server reflection', phases.reflection],
    ['First response', phases.firstResponse],
    ['Total', phases.total],
  ];
  const metadata: Record<string, string> = {};
  for (const entry of response.metadata) {
    metadata[entry.key] = entry.key in metadata ? `${metadata[entry.key]}, ${entry.value}` : entry.value;
  }
  const certificate = response.tls?.certificate ?? null;
  return (
    <section class="rv-part">
      <Heading level={level}>gRPC call</Heading>
      <p class="rv-request-line">
        <span class="rv-mono rv-break">
          {response.grpcMethod} on {response.host}:{response.port ?? '?'}
        </span>
      </p>
      <Facts
        facts={[
          {
            term: 'Status',
            value:
              part.grpcStatusCode === null ? (
                <PassMark
                  ok={false}
                  okText=""
                  badText={`No status: ${part.requestError ?? 'the call was not made'}`}
                />
              ) : (
                <PassMark
                  ok={part.grpcStatusCode === 0}
                  okText={`${part.grpcStatusCode} ${response.grpcStatusMessage}`}
                  badText={`${part.grpcStatusCode} ${response.grpcStatusMessage}`}
                />
              ),
          },
          response.healthStatusLabel !== null && {
            term: 'Health',
            value: (
              <PassMark
                ok={response.healthStatus === 1}
                okText={response.healthStatusLabel}
                badText={response.healthStatusLabel}
              />
            ),
          },
          { term: 'Mode', value: response.grpcMode === 'HEALTH' ? 'Health check' : 'Method call' },
          {
            term: 'Message types',
            value: response.descriptorSource
              ? (DESCRIPTOR_SOURCES[response.descriptorSource] ?? response.descriptorSource)
              : null,
          },
          { term: 'Resolved address', value: response.resolvedIp },
          { term: 'IP family', value: response.ipFamily },
          { term: 'TLS', value: response.tls ? (response.tls.protocol ?? 'yes') : 'No (plaintext HTTP/2)' },
        ]}
      />
      <Heading level={sub}>Timing</Heading>
      <ScrollRegion label="Timing of the gRPC run, by phase">
        <table class="rv-narrow">
          <caption class="visually-hidden">Timing of the gRPC run, by phase</caption>
          <thead>
            <tr>
              <th scope="col">Phase</th>
              <th scope="col" class="num">
                Duration
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map(([label, value]) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                <td class="num">{value === null ? '—' : formatMs(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      {certificate ? (
        <>
          <Heading level={sub}>Certificate</Heading>
          <CertificateFacts certificate={certificate} />
        </>
      ) : null}
      <Heading level={sub}>Response message</Heading>
      {response.responseTruncated ? (
        <p class="muted">
          The response was longer than what the agent keeps (64 KiB of JSON); its start is shown.
        </p>
      ) : null}
      <LongText text={response.responseMessage} empty="No response message." />
      <Heading level={sub}>Response metadata</Heading>
      {response.metadata.length > 0 ? (
        <HeaderTable headers={metadata} caption="Response metadata (headers and trailers)" />
      ) : (
        <p class="muted">No metadata came back.</p>
      )}
      {response.discoveredMethods.length > 0 ? (
        <>
          <Heading level={sub}>Methods of the service</Heading>
          <ul class="rv-mono">
            {response.discoveredMethods.map((m) => (
              <li key={m}>{m}</li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
