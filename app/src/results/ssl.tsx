import type { CheckResult } from '../api/schemas.js';
import { formatMs } from '../ui/format.js';
import { Facts, Heading, type HeadingLevel, PassMark, ScrollRegion, below } from './text.js';

/** The SSL part of a result (docs/checks.md, "SSL"). */
export type SslPart = NonNullable<CheckResult['sslCheckResult']>;

/** `in 42 days`, `expired 3 days ago`, `today`. */
function daysText(days: number): string {
  if (days < 0) return `expired ${-days} day${days === -1 ? '' : 's'} ago`;
  if (days === 0) return 'expires today';
  return `${days} day${days === 1 ? '' : 's'} left`;
}

/**
 * The SSL part: what was connected to, the verdicts (chain, name, expiry, baseline), the protocol and cipher
 * suite, the OCSP staple, the handshake's phases and the chain the server sent, one row per certificate.
 */
export function SslPartView({ part, level }: { part: SslPart; level: HeadingLevel }) {
  const sub = below(level);
  const response = part.response;
  const baseline = response?.securityBaseline ?? null;
  return (
    <section class="rv-part">
      <Heading level={level}>TLS certificate</Heading>
      <p class="rv-request-line">
        <span class="rv-mono rv-break">
          {part.request.hostname}:{part.request.port}
        </span>
        {part.request.serverName && part.request.serverName !== part.request.hostname ? (
          <span class="muted"> (SNI {part.request.serverName})</span>
        ) : null}
      </p>
      {part.requestError ? <p class="rv-error">{part.requestError}</p> : null}
      {response ? (
        <Facts
          facts={[
            {
              term: 'Chain',
              value: (
                <PassMark
                  ok={response.chainTrusted}
                  okText="Trusted"
                  badText={`Not trusted: ${response.chainError ?? 'unknown reason'}`}
                />
              ),
            },
            {
              term: 'Name',
              value: (
                <PassMark
                  ok={response.hostnameVerified}
                  okText="Matches"
                  badText={response.hostnameError ?? 'Does not match'}
                />
              ),
            },
            {
              term: 'Expiry',
              value:
                response.daysUntilExpiry === null ? null : (
                  <PassMark
                    ok={response.daysUntilExpiry >= 0}
                    okText={daysText(response.daysUntilExpiry)}
                    badText={daysText(response.daysUntilExpiry)}
                  />
                ),
            },
            { term: 'Protocol', value: response.protocol },
            {
              term: 'Cipher suite',
              value: <span class="rv-mono rv-break">{response.cipherSuite ?? '—'}</span>,
            },
            { term: 'Resolved address', value: response.resolvedIp },
            {
              term: 'OCSP staple',
              value: response.ocspStapled ? `Stapled (${response.ocspResponseBytes ?? 0} bytes)` : 'None',
            },
            baseline
              ? {
                  term: 'Security baseline',
                  value: `${baseline.verdict}${baseline.findings.length > 0 ? `: ${baseline.findings.map((f) => f.message).join('; ')}` : ''}`,
                }
              : null,
          ]}
        />
      ) : null}
      <Heading level={sub}>Timing</Heading>
      <Facts
        facts={[
          { term: 'DNS lookup', value: formatMs(part.timingPhases.dns) },
          {
            term: 'TCP connect',
            value: part.timingPhases.connect === null ? 'not reached' : formatMs(part.timingPhases.connect),
          },
          {
            term: 'TLS handshake',
            value:
              part.timingPhases.handshake === null ? 'not reached' : formatMs(part.timingPhases.handshake),
          },
          { term: 'Total', value: formatMs(part.timingPhases.total) },
        ]}
      />
      {response && response.chain.length > 0 ? (
        <>
          <Heading level={sub}>Chain</Heading>
          <ScrollRegion label="The certificate chain the server sent, leaf first">
            <table>
              <caption class="visually-hidden">The certificate chain the server sent, leaf first</caption>
              <thead>
                <tr>
                  <th scope="col">Subject</th>
                  <th scope="col">Issuer</th>
                  <th scope="col">Valid from</th>
                  <th scope="col">Valid to</th>
                  <th scope="col">Key</th>
                  <th scope="col">SHA-256 fingerprint</th>
                </tr>
              </thead>
              <tbody>
                {response.chain.map((cert) => (
                  <tr key={cert.fingerprintSha256}>
                    <th scope="row" class="rv-break">
                      {cert.subjectCN ?? cert.subject}
                      {cert.sans.length > 0 ? <div class="muted rv-break">{cert.sans.join(', ')}</div> : null}
                    </th>
                    <td class="rv-break">{cert.issuerCN ?? cert.issuer}</td>
                    <td>{cert.validFrom.slice(0, 10)}</td>
                    <td>
                      {cert.validTo.slice(0, 10)}{' '}
                      <span class="muted">({daysText(cert.daysUntilExpiry)})</span>
                    </td>
                    <td>
                      {cert.keyAlgorithm ?? '—'} {cert.keySizeBits ?? ''}
                    </td>
                    <td class="rv-mono rv-break">{cert.fingerprintSha256}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        </>
      ) : null}
    </section>
  );
}
