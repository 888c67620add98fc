import type { IncomingHttpHeaders } from 'node:http';
import { Client, type Dispatcher } from 'undici';
import {
  createTracingConnector,
  type HopTrace,
  startTrace,
  type TracingConnectorOptions,
} from './connector.js';

/** Options of {@link requestOnce}. Times are performance.now() milliseconds. */
export type RequestOnceOptions = TracingConnectorOptions & {
  /** Any HTTP method: GET, POST, PUT, HEAD, DELETE, PATCH, OPTIONS. */
  method: string;
  /** Header values may be arrays for repeated headers. */
  headers: Record<string, string | string[]>;
  /** Request body, sent with a content-length. */
  body?: Buffer | string;
  /** Keep the body bytes read (up to `maxBodyBytes`) in `result.body`; default false (counted only). */
  collectBody?: boolean;
  /** performance.now() at which the request gives up with an undici-style timeout code. */
  deadline: number;
  /** Aborts the request at once: the result has `aborted: true`. */
  signal: AbortSignal;
  /** Body bytes read before reading stops (`bodyTruncated`); counted, and kept only with `collectBody`. */
  maxBodyBytes: number;
};

/** One request and its response, or why there was none. */
export type RequestOnceResult = {
  trace: HopTrace;
  /** null when no final (non-1xx) response arrived. */
  statusCode: number | null;
  statusText: string;
  headers: IncomingHttpHeaders;
  bodySizeBytes: number;
  bodyTruncated: boolean;
  /** The body bytes read, with `collectBody`; null otherwise. At most `maxBodyBytes`. */
  body: Buffer | null;
  /** Why it failed: a system code (ECONNREFUSED), a TLS code (CERT_HAS_EXPIRED) or an undici code. */
  error: { code: string; message: string } | null;
  aborted: boolean;
};

/** The timeout code undici itself would give for the phase the request was in. */
function timeoutOf(
  trace: HopTrace,
  secure: boolean,
  statusCode: number | null,
  waitedMs: number,
): { code: string; message: string } {
  if (statusCode !== null) {
    return { code: 'UND_ERR_BODY_TIMEOUT', message: `response body did not end within ${waitedMs} ms` };
  }
  if (trace.socketAt !== null && trace.lookupAt === null) {
    return { code: 'ETIMEOUT', message: `DNS lookup did not answer within ${waitedMs} ms` };
  }
  if (trace.connectAt === null || (secure && trace.secureConnectAt === null)) {
    const what = trace.connectAt === null ? 'TCP connection' : 'TLS handshake';
    return { code: 'UND_ERR_CONNECT_TIMEOUT', message: `${what} did not complete within ${waitedMs} ms` };
  }
  return { code: 'UND_ERR_HEADERS_TIMEOUT', message: `no response headers within ${waitedMs} ms` };
}

/**
 * Handed to `client.destroy` once a request has ended. Without one undici builds a
 * ClientDestroyedError per run, and capturing its stack was the costliest step of a check.
 * Only our handler could see it, and it has settled by then.
 */
const REQUEST_ENDED = Object.assign(new Error('request ended'), { code: 'UND_ERR_DESTROYED' });

/** The code of an error (`ECONNREFUSED`, `UND_ERR_SOCKET`), else its name. */
function codeOf(err: Error): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : err.name;
}

/** A request's failure: its code and message. */
type RequestError = { code: string; message: string };

/**
 * The handler of one request's dispatch: the final (non-1xx) response's status and headers into
 * `result`, its body counted (and kept in `chunks` when collected) up to `maxBodyBytes`, where
 * reading stops (`bodyTruncated`); the request settles (`finish`) when the body ends or fails.
 */
function responseHandler(
  result: RequestOnceResult,
  chunks: Buffer[] | null,
  maxBodyBytes: number,
  request: { settled: () => boolean; finish: (error?: RequestError) => void },
): Dispatcher.DispatchHandler {
  const { trace } = result;
  const { finish } = request;
  return {
    onRequestStart() {},
    onResponseStarted() {
      trace.responseAt ??= performance.now();
    },
    onResponseStart(_controller, statusCode, headers, statusMessage) {
      if (statusCode < 200) return;
      result.statusCode = statusCode;
      result.statusText = statusMessage ?? '';
      result.headers = headers;
    },
    onResponseData(controller, chunk) {
      if (request.settled()) return;
      result.bodySizeBytes += chunk.length;
      if (chunks !== null) chunks.push(chunk);
      if (result.bodySizeBytes > maxBodyBytes) {
        // Enough: the rest of the body is neither read nor counted.
        trace.endAt = performance.now();
        result.bodyTruncated = true;
        result.bodySizeBytes = maxBodyBytes;
        // Settle first: aborting reports an error synchronously, which must not count.
        finish();
        controller.abort(new Error('body cap reached'));
      }
    },
    onResponseEnd() {
      trace.endAt = performance.now();
      finish();
    },
    onResponseError(_controller, err) {
      finish({ code: codeOf(err), message: err.message });
    },
  };
}

/**
 * Sends one request over a new connection (its own undici Client, destroyed when the response
 * ends) and reads the response body up to `maxBodyBytes`, counting it. Never rejects: a
 * connection, TLS or timeout failure is a result with its code. Timings land in `trace`.
 */
export function requestOnce(url: URL, options: RequestOnceOptions): Promise<RequestOnceResult> {
  const trace = startTrace();
  const result: RequestOnceResult = {
    trace,
    statusCode: null,
    statusText: '',
    headers: {},
    bodySizeBytes: 0,
    bodyTruncated: false,
    body: null,
    error: null,
    aborted: false,
  };
  const client = new Client(url.origin, {
    connect: createTracingConnector(options, trace),
    // Our own deadline covers every phase; undici's coarse timers would only add noise.
    headersTimeout: 0,
    bodyTimeout: 0,
    pipelining: 1,
  });

  const chunks: Buffer[] | null = options.collectBody ? [] : null;
  return new Promise<RequestOnceResult>((resolve) => {
    let settled = false;
    const finish = (error?: RequestError) => {
      if (settled) return;
      settled = true;
      trace.closed = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      if (error) result.error = error;
      if (chunks !== null)
        result.body = Buffer.concat(chunks, Math.min(result.bodySizeBytes, options.maxBodyBytes));
      // After a complete response undici closes the socket itself (client.destroy below, at the
      // latest); destroying it here first would only make undici build one more error object.
      // A timeout or an abort may leave a socket mid-handshake that undici does not know yet.
      if (error) for (const socket of trace.sockets) socket.destroy();
      client.destroy(REQUEST_ENDED).catch(() => {});
      resolve(result);
    };
    const onAbort = () => {
      result.aborted = true;
      finish({ code: 'ABORT_ERR', message: 'aborted' });
    };
    const timer = setTimeout(
      () => {
        finish(
          timeoutOf(
            trace,
            url.protocol === 'https:',
            result.statusCode,
            Math.round(performance.now() - trace.startAt),
          ),
        );
      },
      Math.max(0, options.deadline - trace.startAt),
    );
    if (options.signal.aborted) return onAbort();
    options.signal.addEventListener('abort', onAbort, { once: true });

    const handler = responseHandler(result, chunks, options.maxBodyBytes, { settled: () => settled, finish });
    const path = `${url.pathname}${url.search}`;
    client.dispatch(
      {
        origin: url.origin,
        path,
        method: options.method,
        headers: options.headers,
        ...(options.body === undefined ? {} : { body: options.body }),
      },
      handler,
    );
  });
}
