import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cleanErrorMessage, errorHash } from '../../../src/service/resources/error-groups/error-groups.js';

describe('cleanErrorMessage', () => {
  const together: [string, string, string][] = [
    ['IPv4 addresses and ports', 'connect ECONNREFUSED 10.0.0.1:443', 'connect ECONNREFUSED 10.0.0.2:8443'],
    ['IPv6 addresses', 'connect ECONNREFUSED ::1:443', 'connect ECONNREFUSED 2001:db8::7:8443'],
    ['bracketed IPv6 with port', 'connect to [2001:db8::1]:443 failed', 'connect to [fe80::1]:8080 failed'],
    ['host ports', 'GET localhost:8080 refused', 'GET localhost:3000 refused'],
    ['durations in ms', 'timeout after 5003 ms', 'timeout after 812 ms'],
    ['durations in seconds', 'timed out after 30s', 'timed out after 4.5 s'],
    [
      'response-time messages',
      'response time 5003.2 ms is at or above maxResponseTime 5000 ms',
      'response time 7311 ms is at or above maxResponseTime 5000 ms',
    ],
    [
      'UUIDs',
      'job 3f2b1c4e-9a8b-4c7d-8e6f-1a2b3c4d5e6f failed',
      'job 0B1C2D3E-4F50-4617-8293-A4B5C6D7E8F9 failed',
    ],
    [
      'ISO timestamps',
      'certificate expired at 2024-05-01T12:34:56.789Z',
      'certificate expired at 2025-01-31T00:00:00+02:00',
    ],
    ['dates', 'certificate expired on 2024-05-01', 'certificate expired on 2025-12-31'],
    ['clock times', 'stalled at 12:00:01', 'stalled at 23:59:59.999'],
    [
      'HTTP dates',
      'stale: Date: Tue, 15 Nov 1994 08:12:31 GMT',
      'stale: Date: Sat, 01 Mar 2025 23:00:00 GMT',
    ],
    [
      'double-quoted values',
      'JSON_BODY $.name: "alice" does not equal "bob"',
      'JSON_BODY $.name: "carol" does not equal "bob"',
    ],
    [
      'single-quoted values',
      "cannot read property 'id' of undefined",
      "cannot read property 'name' of undefined",
    ],
    [
      'URLs',
      'GET https://api.example.com/users/42?x=1 failed: socket hang up',
      'GET http://localhost:8080/health failed: socket hang up',
    ],
    ['0x hex', 'object 0x7ffe1234 freed', 'object 0xdeadbeef freed'],
    [
      'long hex hashes',
      'commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b missing',
      'commit e3b0c44298fc1c149afbf4c8996fb92427ae41e4 missing',
    ],
    [
      'generated ids',
      'request req_4f9a8b7c6d5e4f3a2b1c0d9e8 rejected',
      'request req_0a1b2c3d4e5f6a7b8c9d0e1f2 rejected',
    ],
    ['counts', 'only 12 of 20 answers received', 'only 3 of 20 answers received'],
    ['sizes', 'read 512 bytes, expected 1 KiB', 'read 0 bytes, expected 4 KiB'],
    [
      'percentages',
      'packet loss 40% is at or above maxPacketLossThreshold 20%',
      'packet loss 100% is at or above maxPacketLossThreshold 20%',
    ],
    [
      '3-digit numbers that are no status',
      'assertion RESPONSE_TIME LESS_THAN 100 failed: 153 is not less than 100',
      'assertion RESPONSE_TIME LESS_THAN 100 failed: 982 is not less than 100',
    ],
    ['whitespace', 'upstream  connect\n\terror', ' upstream connect error '],
  ];
  it.each(together)('groups messages differing only in %s', (_what, a, b) => {
    expect(cleanErrorMessage(a)).toBe(cleanErrorMessage(b));
    expect(errorHash(cleanErrorMessage(a))).toBe(errorHash(cleanErrorMessage(b)));
  });

  const apart: [string, string, string][] = [
    ['error codes', 'connect ECONNREFUSED 10.0.0.1:443', 'connect ECONNRESET 10.0.0.1:443'],
    ['DNS failures', 'getaddrinfo ENOTFOUND api.example.com', 'getaddrinfo EAI_AGAIN api.example.com'],
    ['host names', 'getaddrinfo ENOTFOUND a.example.com', 'getaddrinfo ENOTFOUND b.example.com'],
    ['DNS return codes', 'return code NXDOMAIN', 'return code SERVFAIL'],
    ['status after expected/got', 'expected 200 got 500', 'expected 200 got 404'],
    ['status after HTTP', 'HTTP 500', 'HTTP 503'],
    ['status after status code', 'unexpected status code: 502', 'unexpected status code: 504'],
    ['status after HTTP/1.1', 'HTTP/1.1 429 from upstream', 'HTTP/1.1 503 from upstream'],
    ['HTTP versions', 'HTTP/1.1 404', 'HTTP/2 404'],
    [
      'statuses in a STATUS_CODE assertion',
      'assertion STATUS_CODE EQUALS 200 failed: 500 does not equal "200"',
      'assertion STATUS_CODE EQUALS 200 failed: 404 does not equal "200"',
    ],
    [
      'statuses in the STATUS_CODE part of a joined message',
      'response time 5100 ms is at or above maxResponseTime 5000 ms; assertion STATUS_CODE LESS_THAN 400 failed: 500 is not less than 400',
      'response time 5100 ms is at or above maxResponseTime 5000 ms; assertion STATUS_CODE LESS_THAN 400 failed: 503 is not less than 400',
    ],
    [
      'OpenSSL error codes',
      'error:0A000086:SSL routines::certificate verify failed',
      'error:0A000087:SSL routines::certificate verify failed',
    ],
    ['numbers inside identifiers', 'ERR_HTTP2_STREAM_ERROR', 'ERR_HTTP3_STREAM_ERROR'],
    ['words', 'socket hang up', 'socket closed'],
  ];
  it.each(apart)('keeps apart messages differing in %s', (_what, a, b) => {
    expect(cleanErrorMessage(a)).not.toBe(cleanErrorMessage(b));
  });

  it.each([
    ['connect ECONNREFUSED 10.0.0.1:443', 'connect ECONNREFUSED <ip>:<port>'],
    ['timeout after 5003 ms', 'timeout after <duration>'],
    ['expected 200 got 500', 'expected 200 got 500'],
    [
      "job 3f2b1c4e-9a8b-4c7d-8e6f-1a2b3c4d5e6f at 2024-05-01T12:34:56Z said 'no'",
      'job <uuid> at <timestamp> said <value>',
    ],
    [
      "can't reach https://x.example.com/a(b), retried 3 times",
      "can't reach <url>(b), retried <number> times",
    ],
    ['GET https://x.example.com/a. Then 0xff.', 'GET <url>. Then <hex>.'],
    ['value -12.5 out of range 1,000', 'value <number> out of range <number>'],
    ['HTTP/1.1 404 Not Found', 'HTTP/1.1 404 Not Found'],
  ])('cleans %j to %j', (raw, cleaned) => {
    expect(cleanErrorMessage(raw)).toBe(cleaned);
  });

  it('is idempotent on messages built from every kind of fragment', () => {
    const fragments = [
      'connect',
      'ECONNREFUSED',
      '10.0.0.1:443',
      '::1:8443',
      '[fe80::1]:80',
      'timeout after 5003 ms',
      '30s',
      'HTTP/1.1',
      'HTTP',
      '500',
      'status',
      'code',
      'got',
      '404',
      'STATUS_CODE',
      ';',
      '"quoted"',
      "'single'",
      'https://a.example.com/x?y=1',
      '2024-05-01T12:34:56Z',
      '2024-05-01',
      '12:00:01',
      '0xdeadbeef',
      '9f86d081884c7d659a2f',
      '-12.5',
      '1,000',
      'example.com:8080',
      'error:0A000086:SSL',
      "can't",
      '512 bytes',
      '42',
      '3f2b1c4e-9a8b-4c7d-8e6f-1a2b3c4d5e6f',
      '\n',
      '  ',
    ];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...fragments), { maxLength: 12 }),
        fc.constantFrom(' ', '', '; '),
        (parts, sep) => {
          const once = cleanErrorMessage(parts.join(sep));
          expect(cleanErrorMessage(once)).toBe(once);
        },
      ),
    );
  });

  it('groups any two measurements of one message', () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.double({ min: 0, max: 1e6, noNaN: true }), (a, b, ms) => {
        expect(cleanErrorMessage(`connect ETIMEDOUT after ${a} retries in ${ms.toFixed(1)} ms`)).toBe(
          cleanErrorMessage(`connect ETIMEDOUT after ${b} retries in ${Math.round(ms)} ms`),
        );
      }),
    );
  });

  it('cuts messages to 4096 characters and hashes with SHA-256 hex', () => {
    expect(cleanErrorMessage(`${'x'.repeat(5000)}`)).toHaveLength(4096);
    const cleaned = cleanErrorMessage('timeout after 5003 ms');
    expect(errorHash(cleaned)).toBe(createHash('sha256').update('timeout after <duration>').digest('hex'));
    expect(errorHash(cleaned)).toMatch(/^[0-9a-f]{64}$/);
  });
});
