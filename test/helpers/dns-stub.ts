import { createSocket, type RemoteInfo } from 'node:dgram';
import { isIPv4, isIPv6 } from 'node:net';

/** Records of one name; a missing name answers NXDOMAIN, a name without records of a type answers NOERROR empty. */
export type StubZone = Record<string, { A?: string[]; AAAA?: string[]; silent?: boolean }>;

/** A UDP DNS server on 127.0.0.1:0 answering A and AAAA from a fixed zone; counts the questions. */
export type DnsStub = {
  server: string;
  questions: { name: string; type: 'A' | 'AAAA' | number }[];
  close(): Promise<void>;
};

function readName(message: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  for (let length = message[at] ?? 0; length > 0; length = message[at] ?? 0) {
    labels.push(message.subarray(at + 1, at + 1 + length).toString('ascii'));
    at += 1 + length;
  }
  return { name: labels.join('.').toLowerCase(), end: at + 1 };
}

function addressBytes(address: string): Buffer {
  if (isIPv4(address)) return Buffer.from(address.split('.').map(Number));
  if (!isIPv6(address)) throw new Error(`not an address: ${address}`);
  const [head = '', tail = ''] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return Buffer.from(
    groups.flatMap((g) => {
      const n = Number.parseInt(g, 16);
      return [n >> 8, n & 0xff];
    }),
  );
}

/** Starts the stub. Only what c-ares sends for resolve4/resolve6 is understood: one question, class IN. */
export async function startDnsStub(zone: StubZone): Promise<DnsStub> {
  const socket = createSocket('udp4');
  const questions: DnsStub['questions'] = [];
  socket.on('message', (message: Buffer, from: RemoteInfo) => {
    const { name, end } = readName(message, 12);
    const qtype = message.readUInt16BE(end);
    const type = qtype === 1 ? 'A' : qtype === 28 ? 'AAAA' : qtype;
    questions.push({ name, type });
    const entry = zone[name];
    if (entry?.silent) return;
    const answers = entry && (type === 'A' || type === 'AAAA') ? (entry[type] ?? []) : [];
    const header = Buffer.alloc(12);
    header.writeUInt16BE(message.readUInt16BE(0), 0);
    // QR, opcode 0, RD copied, RA; rcode 3 (NXDOMAIN) for unknown names.
    header.writeUInt16BE(0x8000 | (message.readUInt16BE(2) & 0x0100) | 0x0080 | (entry ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const records = answers.map((address) => {
      const data = addressBytes(address);
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0);
      record.writeUInt16BE(qtype, 2);
      record.writeUInt16BE(1, 4);
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    socket.send(Buffer.concat([header, message.subarray(12, end + 4), ...records]), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    questions,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
