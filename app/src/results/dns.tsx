import { formatMs } from '../ui/format.js';
import type { CheckResult } from '../api/schemas.js';
import { Facts, Heading, type HeadingLevel, LongText, PassMark, below, ScrollRegion } from './text.js';

/** The DNS part of a result (docs/checks.md, "DNS"). */
export type DnsPart = NonNullable<CheckResult['dnsCheckResult']>;
/** One resource record of the answer: `TTL` in seconds, `data` in presentation format. */
type DnsRecord = NonNullable<DnsPart['json']>['Answer'][number];

/** Names of the resource record types by number (IANA "Resource Record (RR) TYPEs"). */
const RR_TYPES: Record<number, string> = {
  1: 'A',
  2: 'NS',
  5: 'CNAME',
  6: 'SOA',
  12: 'PTR',
  13: 'HINFO',
  15: 'MX',
  16: 'TXT',
  17: 'RP',
  18: 'AFSDB',
  24: 'SIG',
  25: 'KEY',
  28: 'AAAA',
  29: 'LOC',
  33: 'SRV',
  35: 'NAPTR',
  36: 'KX',
  37: 'CERT',
  39: 'DNAME',
  41: 'OPT',
  43: 'DS',
  44: 'SSHFP',
  45: 'IPSECKEY',
  46: 'RRSIG',
  47: 'NSEC',
  48: 'DNSKEY',
  49: 'DHCID',
  50: 'NSEC3',
  51: 'NSEC3PARAM',
  52: 'TLSA',
  53: 'SMIMEA',
  55: 'HIP',
  59: 'CDS',
  60: 'CDNSKEY',
  61: 'OPENPGPKEY',
  62: 'CSYNC',
  63: 'ZONEMD',
  64: 'SVCB',
  65: 'HTTPS',
  99: 'SPF',
  108: 'EUI48',
  109: 'EUI64',
  249: 'TKEY',
  250: 'TSIG',
  255: 'ANY',
  256: 'URI',
  257: 'CAA',
};

/** A record type by name: `AAAA` for 28; `TYPE65280` (RFC 3597) for a number without a name. */
function rrTypeName(type: number): string {
  return RR_TYPES[type] ?? `TYPE${type}`;
}

/** A TTL in seconds as text: `300 s (5 min)`. */
function formatTtl(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${seconds} s (${Math.round(seconds / 6) / 10} min)`;
  if (seconds < 86_400) return `${seconds} s (${Math.round(seconds / 360) / 10} h)`;
  return `${seconds} s (${Math.round(seconds / 8640) / 10} d)`;
}

function RecordTable({ records, caption }: { records: readonly DnsRecord[]; caption: string }) {
  return (
    <ScrollRegion label={caption}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col" class="num">
              TTL
            </th>
            <th scope="col">Data</th>
          </tr>
        </thead>
        <tbody>
          {records.map((r, i) => (
            // Records may repeat exactly (the answer as it came); their order is their identity.
            <tr key={i}>
              <td class="rv-mono rv-break">{r.name}</td>
              <td class="rv-mono">{rrTypeName(r.type)}</td>
              <td class="num">{formatTtl(r.TTL)}</td>
              <td class="rv-mono rv-break">{r.data}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/**
 * The DNS part: the query, the response code and flags, the resolver it was sent to, the answer records
 * (and the authority section of a negative answer), and the answer as dig prints it.
 */
export function DnsPartView({ part, level }: { part: DnsPart; level: HeadingLevel }) {
  const sub = below(level);
  const json = part.json;
  const server = part.nameServerInfo;
  const flags = json ? (['RD', 'RA', 'AD', 'CD', 'TC'] as const).filter((flag) => json[flag]) : [];
  return (
    <section class="rv-part">
      <Heading level={level}>DNS query</Heading>
      {json?.Question?.length ? (
        <p class="rv-request-line">
          {json.Question.map((q) => (
            <span key={`${q.name} ${q.type}`} class="rv-mono rv-break">
              {q.name} <span class="rv-method">{rrTypeName(q.type)}</span>{' '}
            </span>
          ))}
        </p>
      ) : null}
      <Facts
        facts={[
          {
            term: 'Response code',
            value:
              part.returnCode === null ? (
                <PassMark ok={false} badText="No answer arrived" />
              ) : (
                <PassMark ok={part.returnCode === 'NOERROR'} okText="NOERROR" badText={part.returnCode} />
              ),
          },
          { term: 'Query time', value: formatMs(part.responseTime) },
          server
            ? {
                term: 'Resolver',
                value: (
                  <span class="rv-mono rv-break">
                    {server.host.includes(':') ? `[${server.host}]` : server.host}:{server.port} over{' '}
                    {server.protocol}
                  </span>
                ),
              }
            : null,
          json ? { term: 'Flags', value: flags.length ? flags.join(' ') : 'none' } : null,
          part.truncatedRetriedOverTcp
            ? { term: 'Truncated', value: 'The UDP answer was truncated; the query was repeated over TCP.' }
            : null,
        ]}
      />

      <Heading level={sub}>Answer</Heading>
      {json ? (
        json.Answer?.length ? (
          <RecordTable records={json.Answer} caption="Answer records" />
        ) : (
          <p class="muted">The answer section is empty.</p>
        )
      ) : (
        <p class="muted">No answer arrived.</p>
      )}
      {json?.Authority?.length ? (
        <>
          <Heading level={sub}>Authority</Heading>
          <RecordTable records={json.Authority} caption="Authority records" />
        </>
      ) : null}
      {part.answer ? (
        <details class="rv-details">
          <summary>Answer section as dig prints it</summary>
          <LongText text={part.answer} />
        </details>
      ) : null}
    </section>
  );
}
