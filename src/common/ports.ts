import { createServer } from 'node:net';
import { OutpostError } from './errors.js';

/**
 * The one-line OUTPOST_ERR_STARTUP error for a port that could not be bound: names the
 * variable, the port and address, what to do, and the system code; a host name that does not
 * resolve names HOST instead.
 */
export function listenError(
  variable: string,
  port: number,
  host: string | undefined,
  err: unknown,
): OutpostError {
  const code = (err as { code?: unknown }).code;
  // A host name that does not resolve is HOST's problem, not the port's.
  if ((code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') && host !== undefined) {
    return new OutpostError(
      'OUTPOST_ERR_STARTUP',
      `HOST=${host}: the name does not resolve to an address: set HOST to an address of this machine (127.0.0.1, or 0.0.0.0 for every interface) (${code})`,
      { cause: err },
    );
  }
  const where = `${host ?? 'all interfaces'} port ${port}`;
  const todo =
    code === 'EADDRINUSE'
      ? `is already in use: stop what listens there, or set ${variable} to a free port`
      : code === 'EACCES'
        ? `may not be bound by this user (ports below 1024 need root or CAP_NET_BIND_SERVICE): set ${variable} to a port above 1023`
        : code === 'EADDRNOTAVAIL'
          ? 'is on an address this machine does not have: check HOST'
          : `cannot be listened on: set ${variable} to another port`;
  return new OutpostError(
    'OUTPOST_ERR_STARTUP',
    `${variable}=${port}: ${where} ${todo} (${typeof code === 'string' ? code : (err as Error).message})`,
    { cause: err },
  );
}

/**
 * Binds `port` on `host` (all interfaces when undefined) for a moment and releases it.
 * Port 0 always passes.
 * @throws OutpostError `OUTPOST_ERR_STARTUP` from {@link listenError} when it cannot be bound.
 */
export async function assertPortFree(variable: string, port: number, host?: string): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once('error', (err) => reject(listenError(variable, port, host, err)));
    server.listen({ port, ...(host === undefined ? {} : { host }), exclusive: true }, () =>
      server.close(() => resolve()),
    );
  });
}
