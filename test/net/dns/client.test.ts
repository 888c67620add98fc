import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryDns } from '../../../src/net/dns/index.js';
import { type Dnsmasq, dnsmasqWorks, EXAMPLE_ZONE, startDnsmasq } from '../../helpers/dns-servers.js';
import { missingRequirement } from '../../helpers/requirements.js';

const missing = missingRequirement([
  { ok: dnsmasqWorks(), what: 'dnsmasq', install: 'apt-get install dnsmasq' },
]);

describe.skipIf(missing !== null)('queryDns against dnsmasq', () => {
  let dnsmasq: Dnsmasq;
  beforeAll(async () => {
    dnsmasq = await startDnsmasq(EXAMPLE_ZONE);
  });
  afterAll(async () => dnsmasq?.stop());

  const ask = (query: string, recordType: string, protocol: 'UDP' | 'TCP' = 'UDP') =>
    queryDns({ query, recordType, nameServer: '127.0.0.1', port: dnsmasq.port, protocol });

  it.each([
    ['www.example.test', 'A', 1, ['www.example.test.', '192.0.2.10']],
    ['www.example.test', 'AAAA', 28, ['www.example.test.', '2001:db8::10']],
    ['alias.example.test', 'CNAME', 5, ['alias.example.test.', 'www.example.test.']],
    ['example.test', 'MX', 15, ['example.test.', '10 mail.example.test.']],
    ['_sip._udp.example.test', 'SRV', 33, ['_sip._udp.example.test.', '10 5 5060 sip.example.test.']],
    ['10.2.0.192.in-addr.arpa', 'PTR', 12, ['10.2.0.192.in-addr.arpa.', 'www.example.test.']],
    ['example.test', 'CAA', 257, ['example.test.', '0 issue "letsencrypt.org"']],
    ['svc.example.test', 'HTTPS', 65, ['svc.example.test.', '1 . alpn="h2,h3" port=8443 ipv4hint=192.0.2.1']],
  ] as const)('renders %s %s as dig text and DoH JSON', async (query, type, typeNumber, [name, data]) => {
    const response = await ask(query, type);
    expect(response.returnCode).toBe('NOERROR');
    expect(response.answer).toBe(`${name}\t300\tIN\t${type}\t${data}`);
    expect(response.json).toEqual({
      Status: 0,
      TC: false,
      RD: true,
      RA: true,
      AD: false,
      CD: false,
      Question: [{ name: `${query}.`, type: typeNumber }],
      Answer: [{ name, type: typeNumber, TTL: 300, data }],
    });
  });

  it('renders TXT quoted per string as text and joined as JSON', async () => {
    const response = await ask('example.test', 'TXT');
    expect(response.answer).toBe('example.test.\t300\tIN\tTXT\t"v=spf1 -all" "second"');
    expect(response.json.Answer).toEqual([
      { name: 'example.test.', type: 16, TTL: 300, data: 'v=spf1 -allsecond' },
    ]);
    const quoted = await ask('quoted.example.test', 'TXT');
    expect(quoted.answer).toBe('quoted.example.test.\t300\tIN\tTXT\t"say \\"hi\\""');
    expect(quoted.json.Answer[0]?.data).toBe('say "hi"');
  });

  it('follows a CNAME chain in the answer section and turns an IP into a PTR name', async () => {
    const chained = await ask('alias.example.test', 'A');
    expect(chained.answer.split('\n')).toEqual([
      'alias.example.test.\t300\tIN\tCNAME\twww.example.test.',
      'www.example.test.\t300\tIN\tA\t192.0.2.10',
    ]);
    const reverse = await ask('192.0.2.10', 'PTR');
    expect(reverse.json.Question).toEqual([{ name: '10.2.0.192.in-addr.arpa.', type: 12 }]);
    expect(reverse.json.Answer[0]?.data).toBe('www.example.test.');
  });

  it('answers NXDOMAIN for an unknown name as an answer, not an error', async () => {
    const response = await ask('nope.example.test', 'A');
    expect(response.returnCode).toBe('NXDOMAIN');
    expect(response.rcode).toBe(3);
    expect(response.answer).toBe('');
    expect(response.json).toMatchObject({
      Status: 3,
      Answer: [],
      Question: [{ name: 'nope.example.test.', type: 1 }],
    });
  });

  it('asks over TCP when told to', async () => {
    const response = await ask('example.test', 'MX', 'TCP');
    expect(response.protocol).toBe('TCP');
    expect(response.truncatedRetriedOverTcp).toBe(false);
    expect(response.answer).toBe('example.test.\t300\tIN\tMX\t10 mail.example.test.');
  });
});
