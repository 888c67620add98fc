import type { ComponentProps } from 'preact';
import { fireEvent, render, screen, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { ResultView } from '../../../app/src/results/view.js';
// The harness unmounts what a test rendered after it.
import '../dom.js';

// The result view in a real DOM, fed stored results (fixture objects of the shapes the API answers): the
// facts, errors and assertions every result has, and the part of each type (HTTP, DNS, ICMP, TCP). The
// view makes no request.

type Result = ComponentProps<typeof ResultView>['result'];

/** What every result has; a type's part is added by each test. */
function result(fields: Partial<Result> = {}): Result {
  return {
    status: 'PASSED',
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    responseTime: 231,
    startedAt: '2026-03-01T10:00:00.000Z',
    stoppedAt: '2026-03-01T10:00:00.231Z',
    runLocation: 'us-east-1',
    attempts: 1,
    resultType: 'FINAL',
    errorMessage: null,
    assertions: [],
    logs: [],
    artifacts: [],
    ...fields,
  };
}

function renderResult(data: Result) {
  return render(<ResultView result={data} checkId="chk-1" resultId="res-1" level={2} />);
}

/** The value of the fact `term` (the first of that name). */
function fact(term: string): string {
  const dt = screen.getAllByText(term, { selector: 'dt' })[0]!;
  return dt.nextElementSibling?.textContent ?? '';
}

const HTTP: NonNullable<Result['httpCheckResult']> = {
  request: {
    method: 'POST',
    url: 'https://api.example.com/orders',
    headers: { 'content-type': 'application/json', authorization: '*****' },
    body: '{"item":1}',
  },
  response: {
    statusCode: 201,
    statusText: 'Created',
    url: 'https://api.example.com/orders/42',
    headers: { 'content-type': 'application/json' },
    bodySizeBytes: 1234,
    bodyTruncated: false,
    body: '{"id":42}',
  },
  timings: { socket: 1, lookup: 5, connect: 20, secureConnect: 60, response: 180, end: 231 },
  timingPhases: { wait: 1, dns: 4, tcp: 15, tls: 40, firstByte: 120, download: 51, total: 231 },
  redirects: [{ url: 'http://api.example.com/orders', statusCode: 301 }],
  certificate: {
    subject: { commonName: 'api.example.com', organization: null },
    issuer: { commonName: 'Example CA', organization: 'Example' },
    subjectAltNames: ['DNS:api.example.com'],
    validFrom: '2026-01-01T00:00:00.000Z',
    validTo: '2026-06-01T00:00:00.000Z',
    daysRemaining: 92,
    fingerprint256: 'AA:BB',
    serialNumber: '01',
    authorized: true,
    authorizationError: null,
  },
  resolvedIp: '203.0.113.7',
  connection: { protocol: 'tcp', family: 6, remoteAddress: '2001:db8::7', remotePort: 443 },
  resolver: 'os',
  errorCode: null,
};

describe('what every result shows', () => {
  it('shows its status, response time, location, times, attempt and result type', () => {
    renderResult(result({ attempts: 3, overMaxResponseTime: true }));
    expect(fact('Response time')).toContain('231 ms');
    expect(fact('Response time')).toContain('over the maximum response time');
    expect(fact('Run location')).toBe('us-east-1');
    expect(fact('Attempt')).toBe('3');
    expect(fact('Result type')).toBe('Final result, after 2 retries');
    expect(screen.getByText('The run logged nothing.')).toBeTruthy();
    expect(screen.getByText('No file was uploaded with this result.')).toBeTruthy();
  });

  it('tells an error of the agent from an error of the check, and what was truncated', () => {
    const { unmount } = renderResult(result({ hasErrors: true, errorMessage: 'spawn failed' }));
    expect(screen.getByText('The agent could not run the check')).toBeTruthy();
    expect(screen.getByText('spawn failed')).toBeTruthy();
    unmount();
    renderResult(
      result({
        status: 'FAILED',
        hasFailures: true,
        errorMessage: 'expected 200, got 500',
        truncated: {
          reason: 'result over 1 MiB',
          originalSizeBytes: 2_097_152,
          fields: ['logs', 'httpCheckResult.response.body'],
        },
      }),
    );
    expect(screen.getByText('Error')).toBeTruthy();
    expect(screen.getByText('expected 200, got 500')).toBeTruthy();
    expect(screen.getByText('This result was truncated')).toBeTruthy();
    expect(screen.getByText('httpCheckResult.response.body')).toBeTruthy();
  });

  it('shows the assertions with their outcome and the log lines', () => {
    renderResult(
      result({
        assertions: [
          {
            source: 'STATUS_CODE',
            property: '',
            comparison: 'LESS_THAN',
            target: '400',
            regex: null,
            actual: 201,
            error: null,
          },
          {
            source: 'JSON_BODY',
            property: '$.id',
            comparison: 'EQUALS',
            target: '41',
            regex: null,
            actual: '42',
            error: 'expected 41',
          },
        ] as NonNullable<Result['assertions']>,
        logs: [{ time: '2026-03-01T10:00:00.100Z', level: 'WARN', msg: 'slow upstream' }],
        httpCheckResult: HTTP,
      }),
    );
    expect(screen.getByText('1 of 2 assertions failed.')).toBeTruthy();
    const table = screen.getByRole('table', { name: 'Assertions and their outcome' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows[0]!.textContent).toContain('is less than');
    expect(rows[1]!.textContent).toContain('expected 41');
    const logs = screen.getByRole('table', { name: 'Log lines of the run' });
    expect(logs.textContent).toContain('WARN');
    expect(logs.textContent).toContain('slow upstream');
  });
});

describe('an HTTP result', () => {
  it('shows the request, redirects, response, connection and certificate', () => {
    renderResult(result({ httpCheckResult: HTTP }));
    expect(screen.getByRole('heading', { name: 'HTTP request', level: 2 })).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Timing', level: 3 })).toBeTruthy();
    expect(screen.getByText('POST')).toBeTruthy();
    expect(screen.getByText('https://api.example.com/orders')).toBeTruthy();
    expect(screen.getByText('Request headers (2)')).toBeTruthy();
    expect(screen.getByText('*****')).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Redirects' })).toBeTruthy();
    expect(screen.getByText('http://api.example.com/orders')).toBeTruthy();
    expect(fact('Status')).not.toBe('');
    expect(screen.getByText('201 Created')).toBeTruthy();
    expect(fact('Answered by')).toBe('https://api.example.com/orders/42');
    expect(fact('Body size')).toBe('1,234 bytes');
    expect(screen.getByText('Response headers (1)')).toBeTruthy();
    expect(fact('Resolved address')).toBe('203.0.113.7');
    expect(fact('Connected to')).toBe('[2001:db8::7]:443');
    expect(fact('IP family')).toBe('IPv6');
    expect(fact('Resolver')).toBe('Operating system (getaddrinfo)');
    expect(screen.getByRole('heading', { name: 'Certificate' })).toBeTruthy();
  });

  it('says what failed when no response arrived', () => {
    renderResult(
      result({
        status: 'FAILED',
        hasFailures: true,
        httpCheckResult: {
          ...HTTP,
          request: { method: 'GET', url: 'https://down.example.com/' },
          response: null,
          redirects: [],
          certificate: null,
          connection: null,
          resolver: 'dns',
          errorCode: 'ECONNREFUSED',
        },
      }),
    );
    expect(screen.getByText('ECONNREFUSED')).toBeTruthy();
    expect(screen.getByText('No response arrived.')).toBeTruthy();
    expect(screen.queryByRole('heading', { name: 'Redirects' })).toBeNull();
    expect(fact('Resolver')).toBe('DNS (name server)');
  });

  it('says when a URL monitor stores no body', () => {
    renderResult(
      result({ httpCheckResult: { ...HTTP, response: { ...HTTP.response!, body: undefined } as never } }),
    );
    expect(screen.getByText(/The response body is not stored for this check type/)).toBeTruthy();
  });
});

describe('a DNS result', () => {
  const DNS: NonNullable<Result['dnsCheckResult']> = {
    returnCode: 'NOERROR',
    answer: 'example.com.\t300\tIN\tA\t93.184.216.34',
    json: {
      Status: 0,
      TC: false,
      RD: true,
      RA: true,
      AD: false,
      CD: false,
      Question: [{ name: 'example.com.', type: 1 }],
      Answer: [{ name: 'example.com.', type: 1, TTL: 300, data: '93.184.216.34' }],
    },
    responseTime: 12.5,
    nameServerInfo: { host: '2001:4860:4860::8888', port: 53, protocol: 'UDP' },
    truncatedRetriedOverTcp: true,
  };

  it('shows the question, response code, resolver, flags and the answer records', () => {
    renderResult(result({ dnsCheckResult: DNS }));
    expect(screen.getByRole('heading', { name: 'DNS query' })).toBeTruthy();
    expect(fact('Response code')).toContain('NOERROR');
    expect(fact('Query time')).toBe('13 ms');
    expect(fact('Resolver')).toBe('[2001:4860:4860::8888]:53 over UDP');
    expect(fact('Flags')).toBe('RD RA');
    expect(fact('Truncated')).toContain('repeated over TCP');
    const records = screen.getByRole('table', { name: 'Answer records' });
    expect(records.textContent).toContain('93.184.216.34');
    expect(screen.getByText('Answer section as dig prints it')).toBeTruthy();
  });

  it('says when no answer arrived', () => {
    renderResult(
      result({
        status: 'FAILED',
        dnsCheckResult: {
          ...DNS,
          returnCode: null,
          json: null,
          answer: '',
          responseTime: null,
          truncatedRetriedOverTcp: false,
        },
      }),
    );
    expect(fact('Response code')).toContain('No answer arrived');
    expect(screen.getByText('No answer arrived.')).toBeTruthy();
    expect(screen.queryByText('Flags', { selector: 'dt' })).toBeNull();
  });
});

describe('an ICMP result', () => {
  const ICMP: NonNullable<Result['icmpCheckResult']> = {
    hostname: 'example.com',
    resolvedIp: '93.184.216.34',
    ipFamily: 'IPv4',
    pingCount: 3,
    packetSize: 56,
    packetsSent: 3,
    packetsReceived: 2,
    packetLoss: 33.3,
    latency: { min: 10, avg: 15, max: 20, stdDev: 5 },
    dnsResolutionTime: 2,
    socketType: 'datagram',
    pingResults: [
      { sequence: 1, success: true, rtt: 10, ttl: 56 },
      { sequence: 2, success: false, rtt: null, ttl: null },
      { sequence: 3, success: true, rtt: 20, ttl: 56 },
    ],
  };

  it('shows the packets, loss, latency and host', () => {
    renderResult(result({ icmpCheckResult: ICMP }));
    expect(screen.getByRole('heading', { name: 'Ping' })).toBeTruthy();
    const stats = document.querySelector('.rv-stats')!;
    expect(stats.textContent).toContain('Packets sent3');
    expect(stats.textContent).toContain('Packets received2');
    expect(stats.textContent).toContain('Average latency15 ms');
    expect(fact('Host')).toBe('example.com');
    expect(fact('Socket')).toBe('Datagram (unprivileged)');
    expect(fact('Packet size')).toBe('56 bytes');
    expect(fact('Latency max')).toBe('20 ms');
    expect(screen.getByRole('heading', { name: 'Echo requests' })).toBeTruthy();
  });

  it('says when no echo request got a reply', () => {
    renderResult(
      result({
        status: 'FAILED',
        icmpCheckResult: {
          ...ICMP,
          packetsReceived: 0,
          packetLoss: 100,
          latency: { min: null, avg: null, max: null, stdDev: null },
          pingResults: [],
        },
      }),
    );
    expect(screen.getByText('No echo request got a reply.')).toBeTruthy();
    expect(screen.getByText('No echo request was sent.')).toBeTruthy();
  });
});

describe('a TCP result', () => {
  const TCP: NonNullable<Result['tcpCheckResult']> = {
    hostname: 'mail.example.com',
    port: 25,
    resolvedIp: '198.51.100.25',
    ipFamily: 'IPv4',
    resolver: 'dns',
    connected: true,
    errorCode: null,
    timings: { dns: 3, connect: 18, firstByte: 40, total: 65 },
    bytesSent: 6,
    bytesReceived: 2048,
    responseData: '220 mail.example.com ESMTP ready',
    responseTruncated: true,
  };

  it('shows the target, handshake, bytes, timing and reply', () => {
    renderResult(result({ tcpCheckResult: TCP }));
    expect(screen.getByRole('heading', { name: 'TCP connection' })).toBeTruthy();
    expect(screen.getByText('mail.example.com:25')).toBeTruthy();
    expect(fact('Connected')).toContain('Handshake completed');
    expect(fact('Bytes received')).toBe('2,048');
    const timing = screen.getByRole('table', { name: 'Timing of the TCP run, by phase' });
    expect(timing.textContent).toContain('TCP connect18 ms');
    expect(timing.textContent).toContain('First byte of the reply40 ms');
    expect(
      screen.getByText(/The reply was longer than what the agent keeps; 2,048 bytes arrived/),
    ).toBeTruthy();
    expect(screen.getByText(/220 mail.example.com ESMTP ready/)).toBeTruthy();
  });

  it('says why it did not connect and that nothing came back', () => {
    renderResult(
      result({
        status: 'FAILED',
        tcpCheckResult: {
          ...TCP,
          connected: false,
          errorCode: 'ECONNREFUSED',
          timings: { dns: 3, connect: 1, firstByte: null, total: 4 },
          bytesReceived: 0,
          responseData: '',
          responseTruncated: false,
        },
      }),
    );
    expect(fact('Connected')).toContain('Not connected: ECONNREFUSED');
    expect(screen.getByRole('table', { name: 'Timing of the TCP run, by phase' }).textContent).toContain(
      'no reply',
    );
    expect(screen.getByText('Nothing came back.')).toBeTruthy();
  });
});

describe('long logs', () => {
  it('shows the first 100 lines until Show all', () => {
    const logs = Array.from({ length: 120 }, (_, i) => ({
      time: '2026-03-01T10:00:00.000Z',
      level: 'INFO' as const,
      msg: `line ${i + 1}`,
    }));
    renderResult(result({ logs }));
    const table = screen.getByRole('table', { name: 'Log lines of the run' });
    expect(within(table).getAllByRole('row')).toHaveLength(101);
    expect(screen.getByText('Showing the first 100 of 120 lines.')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Show all' }));
    expect(within(table).getAllByRole('row')).toHaveLength(121);
  });
});

describe('an SSL result', () => {
  const CERT = {
    subjectCN: 'shop.example.com',
    issuerCN: 'Example CA',
    subject: 'CN=shop.example.com',
    issuer: 'CN=Example CA',
    sans: ['DNS:shop.example.com'],
    validFrom: '2026-01-01T00:00:00.000Z',
    validTo: '2026-12-31T00:00:00.000Z',
    daysUntilExpiry: 32,
    serialNumber: '1000',
    fingerprintSha256: 'AA:BB',
    fingerprintSha1: 'CC:DD',
    keyAlgorithm: 'ec',
    keySizeBits: 256,
    isCA: false,
    selfSigned: false,
  };
  const SSL: NonNullable<Result['sslCheckResult']> = {
    tlsVersion: 'TLSv1.2',
    cipherSuite: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
    daysUntilExpiry: 32,
    handshakeTimeMs: 4,
    chainTrusted: false,
    hostnameVerified: true,
    baselineVerdict: 'FAIL',
    failureCategory: 'untrusted',
    requestError: null,
    request: { hostname: 'shop.example.com', port: 443, serverName: 'shop.example.com', ipFamily: 'IPv4' },
    timingPhases: { dns: 1, connect: 2, handshake: 4, total: 9 },
    response: {
      resolvedIp: '198.51.100.7',
      protocol: 'TLSv1.2',
      cipherSuite: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
      handshakeTimeMs: 4,
      hostnameVerified: true,
      hostnameError: null,
      chainTrusted: false,
      chainError: 'SELF_SIGNED_CERT_IN_CHAIN',
      daysUntilExpiry: 32,
      ocspStapled: true,
      ocspResponseBytes: 471,
      securityBaseline: {
        verdict: 'FAIL',
        findings: [{ rule: 'minTLSVersion', severity: 'fail', message: 'TLSv1.2 is below TLS 1.3' }],
        notJudged: [],
      },
      certificate: CERT,
      chain: [
        CERT,
        { ...CERT, subjectCN: 'Example CA', fingerprintSha256: 'EE:FF', isCA: true, selfSigned: true },
      ],
    },
    sslCertificate: null,
  };

  it('shows the verdicts, protocol, staple, baseline and the chain', () => {
    renderResult(result({ status: 'FAILED', sslCheckResult: SSL }));
    expect(screen.getByRole('heading', { name: 'TLS certificate' })).toBeTruthy();
    expect(fact('Chain')).toContain('Not trusted: SELF_SIGNED_CERT_IN_CHAIN');
    expect(fact('Name')).toContain('Matches');
    expect(fact('Expiry')).toContain('32 days left');
    expect(fact('Protocol')).toBe('TLSv1.2');
    expect(fact('OCSP staple')).toBe('Stapled (471 bytes)');
    expect(fact('Security baseline')).toBe('FAIL: TLSv1.2 is below TLS 1.3');
    const chain = screen.getByRole('table', { name: 'The certificate chain the server sent, leaf first' });
    expect(within(chain).getAllByRole('row')).toHaveLength(3);
    expect(chain.textContent).toContain('Example CA');
  });
});

describe('a TRACEROUTE result', () => {
  const TRACE: NonNullable<Result['tracerouteCheckResult']> = {
    totalHops: 3,
    destinationReached: false,
    finalHopLatency: { avg: null, min: null, max: null, stdDev: null },
    timingPhases: { dns: 0, total: 1004 },
    requestError: null,
    request: {
      url: 'shop.example.com',
      protocol: 'ICMP',
      port: null,
      ipFamily: 'IPv4',
      maxHops: 30,
      maxUnknownHops: 2,
      ptrLookup: true,
      timeout: 10,
    },
    response: {
      hostname: 'shop.example.com',
      resolvedIp: '198.51.100.7',
      port: null,
      ipFamily: 'IPv4',
      maxHops: 30,
      totalHops: 3,
      destinationReached: false,
      truncationReason: 'maxUnknownHops',
      probeProtocol: 'ICMP',
      socketType: 'datagram',
      finalHopLatency: { avg: null, min: null, max: null, stdDev: null },
      hops: [
        {
          hop_number: 1,
          main_ip: '10.0.0.1',
          main_host: 'gw.lan',
          addresses: ['10.0.0.1'],
          sent: 3,
          received: 2,
          loss_percentage: 33.333,
          rtt: { last_ms: 1.2, avg_ms: 1.1, best_ms: 1, worst_ms: 1.2, stddev_ms: 0.1 },
          annotations: [],
        },
        ...[2, 3].map((n) => ({
          hop_number: n,
          main_ip: null,
          main_host: '',
          addresses: [],
          sent: 3,
          received: 0,
          loss_percentage: 100,
          rtt: null,
          annotations: [],
        })),
      ],
    },
  };

  it('shows whether it was reached, why it stopped and every hop', () => {
    renderResult(result({ status: 'FAILED', tracerouteCheckResult: TRACE }));
    expect(screen.getByRole('heading', { name: 'Route' })).toBeTruthy();
    expect(fact('Destination')).toContain('Not reached');
    expect(fact('Stopped because')).toBe('too many hops in a row did not answer');
    expect(fact('Hops')).toBe('3');
    const hops = screen.getByRole('table', { name: 'The hops of the route, nearest first' });
    const rows = within(hops).getAllByRole('row');
    expect(rows).toHaveLength(4);
    expect(rows[1]!.textContent).toContain('gw.lan');
    expect(rows[2]!.textContent).toContain('* (no answer)');
  });
});
