import { formatMs } from '../ui/format.js';
import type { CheckResult } from '../api/schemas.js';
import { Facts, Heading, type HeadingLevel, LongText, PassMark, below, ScrollRegion } from './text.js';

/** The TCP part of a result (docs/checks.md, "TCP"). */
export type TcpPart = NonNullable<CheckResult['tcpCheckResult']>;

/**
 * The TCP part: the host and port, the address connected to, whether the handshake completed, the phase
 * times (DNS, connect, first byte, total), the bytes exchanged and the reply as text.
 */
export function TcpPartView({ part, level }: { part: TcpPart; level: HeadingLevel }) {
  const sub = below(level);
  const timings = part.timings;
  return (
    <section class="rv-part">
      <Heading level={level}>TCP connection</Heading>
      <p class="rv-request-line">
        <span class="rv-mono rv-break">
          {part.hostname}:{part.port}
        </span>
      </p>
      <Facts
        facts={[
          {
            term: 'Connected',
            value: (
              <PassMark
                ok={part.connected}
                okText="Handshake completed"
                badText={part.errorCode ? `Not connected: ${part.errorCode}` : 'Not connected'}
              />
            ),
          },
          { term: 'Resolved address', value: part.resolvedIp },
          { term: 'IP family', value: part.ipFamily },
          {
            term: 'Resolver',
            value: part.resolver === 'os' ? 'Operating system (getaddrinfo)' : 'DNS (name server)',
          },
          { term: 'Bytes sent', value: part.bytesSent.toLocaleString() },
          { term: 'Bytes received', value: part.bytesReceived.toLocaleString() },
        ]}
      />
      {timings ? (
        <>
          <Heading level={sub}>Timing</Heading>
          <ScrollRegion label="Timing of the TCP run, by phase">
            <table class="rv-narrow">
              <caption class="visually-hidden">Timing of the TCP run, by phase</caption>
              <thead>
                <tr>
                  <th scope="col">Phase</th>
                  <th scope="col" class="num">
                    Duration
                  </th>
                </tr>
              </thead>
              <tbody>
                <tr>
                  <th scope="row">DNS lookup</th>
                  <td class="num">{formatMs(timings.dns)}</td>
                </tr>
                <tr>
                  <th scope="row">TCP connect</th>
                  <td class="num">{formatMs(timings.connect)}</td>
                </tr>
                <tr>
                  <th scope="row">First byte of the reply</th>
                  <td class="num">{timings.firstByte === null ? 'no reply' : formatMs(timings.firstByte)}</td>
                </tr>
                <tr>
                  <th scope="row">Total</th>
                  <td class="num">{formatMs(timings.total)}</td>
                </tr>
              </tbody>
            </table>
          </ScrollRegion>
        </>
      ) : null}
      <Heading level={sub}>Reply</Heading>
      {part.responseTruncated ? (
        <p class="muted">
          The reply was longer than what the agent keeps; {part.bytesReceived.toLocaleString()} bytes arrived.
        </p>
      ) : null}
      <LongText text={part.responseData ?? ''} empty="Nothing came back." />
    </section>
  );
}
