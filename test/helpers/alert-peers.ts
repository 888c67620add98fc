import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

/** One request an HTTP peer received. */
export type RecordedRequest = {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw body as UTF-8 text. */
  body: string;
};

/** What an HTTP peer answers; every field optional (200, no extra headers, `ok`). */
export type PeerAnswer = { status?: number; headers?: Record<string, string>; body?: string };

/**
 * Decides the answer to request number `n` (0-based); undefined answers 200 `ok`. A handler
 * that returns `'hang'` never answers (the peer's close ends the connection).
 */
export type PeerHandler = (request: RecordedRequest, n: number) => PeerAnswer | 'hang' | undefined;

/** A real HTTP receiver on 127.0.0.1. */
export type HttpPeer = {
  /** `http://127.0.0.1:{port}`, without trailing slash. */
  origin: string;
  /** Requests received so far, in order. */
  readonly requests: RecordedRequest[];
  /** Closes the server and every connection (hanging ones included). */
  close(): Promise<void>;
};

/** Most body bytes a peer records per request (a sender bounds what it sends; a test should not hang on it). */
const MAX_RECORDED_BODY = 4 * 1024 * 1024;

/** Starts an HTTP receiver on 127.0.0.1:0 that records every request and answers as `handler` says. */
export async function startHttpPeer(handler?: PeerHandler): Promise<HttpPeer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_RECORDED_BODY) chunks.push(c);
    });
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const n = requests.length;
      requests.push(recorded);
      const answer = handler?.(recorded, n);
      if (answer === 'hang') return;
      res.writeHead(answer?.status ?? 200, answer?.headers ?? {});
      res.end(answer?.body ?? 'ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback URL nothing listens on (a port bound and released), for refused connections. */
export async function refusedOrigin(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A mail an SMTP peer accepted (or refused), parsed enough to read it. */
export type ReceivedMail = {
  /** Envelope sender and recipients. */
  from: string;
  to: string[];
  /** Top-level headers, names lower-cased, encoded words decoded. */
  headers: Record<string, string>;
  messageId: string;
  subject: string;
  /** The text/plain and text/html parts, decoded; null when absent. */
  text: string | null;
  html: string | null;
  /** The whole message as sent. */
  raw: string;
};

/** A real SMTP server on 127.0.0.1 (no TLS, authentication optional) collecting mails. */
export type SmtpPeer = {
  /** `smtp://127.0.0.1:{port}` for OUTPOST_SMTP_URL. */
  url: string;
  /** Mails accepted, in order. */
  readonly mails: ReceivedMail[];
  /** Mails received, refused ones included. */
  readonly received: ReceivedMail[];
  close(): Promise<void>;
};

/**
 * Starts an SMTP server. `failWith(mail, n)` may refuse mail number `n` (0-based, counting every
 * mail received) with a reply code after its data: 451 (temporary) or 550 (permanent).
 */
export async function startSmtpPeer(
  options: { failWith?: (mail: ReceivedMail, n: number) => 451 | 550 | undefined } = {},
): Promise<SmtpPeer> {
  const mails: ReceivedMail[] = [];
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mail = parseMail(Buffer.concat(chunks).toString('utf8'), session);
        const n = received.length;
        received.push(mail);
        const code = options.failWith?.(mail, n);
        if (code !== undefined) {
          const err = new Error(code === 451 ? 'try again later' : 'mailbox unavailable') as Error & {
            responseCode: number;
          };
          err.responseCode = code;
          callback(err);
          return;
        }
        mails.push(mail);
        callback();
      });
    },
  });
  // A client that dies mid-session (a service killed by a test) resets its connection: smtp-server reports that
  // as an 'error' event, which with no listener would end the test process.
  server.on('error', () => {});
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Splits a MIME entity into its headers (lower-cased, unfolded) and body. */
function splitEntity(raw: string): { headers: Record<string, string>; body: string } {
  const at = raw.indexOf('\r\n\r\n');
  const head = at < 0 ? raw : raw.slice(0, at);
  const body = at < 0 ? '' : raw.slice(at + 4);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = decodeWords(line.slice(colon + 1).trim());
  }
  return { headers, body };
}

/** Decodes RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`). */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_m, _charset, enc: string, text: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeQuotedPrintable(text.replace(/_/g, ' ')),
    );
}

function decodeQuotedPrintable(text: string): string {
  const soft = text.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let k = 0; k < soft.length; k++) {
    const c = soft[k] as string;
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(k + 1, k + 3))) {
      bytes.push(Number.parseInt(soft.slice(k + 1, k + 3), 16));
      k += 2;
    } else {
      bytes.push(...Buffer.from(c));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeBody(headers: Record<string, string>, body: string): string {
  const encoding = (headers['content-transfer-encoding'] ?? '').toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  return body;
}

/** The leaf parts of a MIME entity, depth first. */
function leaves(entity: { headers: Record<string, string>; body: string }): Array<{
  headers: Record<string, string>;
  body: string;
}> {
  const type = entity.headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!type.toLowerCase().startsWith('multipart/') || !boundary) return [entity];
  const parts = entity.body.split(`--${boundary}`).slice(1);
  return parts
    .filter((p) => !p.startsWith('--'))
    .flatMap((p) => leaves(splitEntity(p.replace(/^\r\n/, '').replace(/\r\n$/, ''))));
}

function parseMail(raw: string, session: SMTPServerSession): ReceivedMail {
  const top = splitEntity(raw);
  let text: string | null = null;
  let html: string | null = null;
  for (const part of leaves(top)) {
    const type = (part.headers['content-type'] ?? 'text/plain').toLowerCase();
    if (type.startsWith('text/plain') && text === null) text = decodeBody(part.headers, part.body);
    if (type.startsWith('text/html') && html === null) html = decodeBody(part.headers, part.body);
  }
  const envelope = session.envelope;
  return {
    from: envelope.mailFrom ? envelope.mailFrom.address : '',
    to: envelope.rcptTo.map((r) => r.address),
    headers: top.headers,
    messageId: top.headers['message-id'] ?? '',
    subject: top.headers.subject ?? '',
    text,
    html,
    raw,
  };
}
