import { Metadata, type ServiceError, status as grpcStatus } from '@grpc/grpc-js';
import type { GrpcChannel } from './channel.js';
import { encodeStringField, fieldText, fileDescriptorNames, readFields, WireFormatError } from './wire.js';

/** The server-reflection protocols tried, newest first (grpc/reflection/v1 and v1alpha: the same messages). */
export const REFLECTION_SERVICES = [
  'grpc.reflection.v1.ServerReflection',
  'grpc.reflection.v1alpha.ServerReflection',
] as const;

/** Limits of one reflection exchange. */
export type ReflectionLimits = {
  /** Most file descriptors fetched (the symbol's file and its imports). Default 64. */
  maxFiles?: number;
  /** Most descriptor bytes in all, bytes. Default 4 MiB. */
  maxBytes?: number;
};

/** What the server's reflection gave. */
export type ReflectedDescriptors = {
  /** Serialized FileDescriptorProtos: the file defining the symbol and every file it imports. */
  files: Uint8Array[];
  /** The services the server lists (at most 100 names). */
  services: string[];
  /** The reflection service that answered. */
  reflectionService: (typeof REFLECTION_SERVICES)[number];
};

/** Why reflection gave nothing: one line, and whether the server offers no reflection at all. */
export type ReflectionFailure = { error: string; unavailable: boolean; code: number | null };

// ServerReflectionRequest fields: file_by_filename = 3, file_containing_symbol = 4, list_services = 7.
const FILE_BY_FILENAME = 3;
const FILE_CONTAINING_SYMBOL = 4;
const LIST_SERVICES = 7;

/**
 * Fetches the descriptors of `symbol` (a fully-qualified service name, `pkg.Service`) by server
 * reflection over `channel`: v1 first, v1alpha when the server does not implement v1. The file
 * defining it comes first, then its imports, fetched by name when the server did not send them
 * with it. Ends at `deadline` (Date.now() ms). Never rejects.
 */
export async function reflectDescriptors(
  channel: GrpcChannel,
  symbol: string,
  deadline: number,
  signal: AbortSignal,
  limits: ReflectionLimits = {},
): Promise<ReflectedDescriptors | ReflectionFailure> {
  let last: ReflectionFailure = { error: 'the server offers no reflection', unavailable: true, code: null };
  for (const service of REFLECTION_SERVICES) {
    const answer = await exchange(channel, service, symbol, deadline, signal, limits);
    if ('files' in answer) return answer;
    last = answer;
    if (!answer.unavailable) return answer;
  }
  return last;
}

function exchange(
  channel: GrpcChannel,
  service: (typeof REFLECTION_SERVICES)[number],
  symbol: string,
  deadline: number,
  signal: AbortSignal,
  limits: ReflectionLimits,
): Promise<ReflectedDescriptors | ReflectionFailure> {
  const maxFiles = limits.maxFiles ?? 64;
  const maxBytes = limits.maxBytes ?? 4 * 1024 * 1024;
  channel.connect();
  return new Promise((resolve) => {
    const stream = channel.client.makeBidiStreamRequest<Buffer, Buffer>(
      `/${service}/ServerReflectionInfo`,
      (b) => b,
      (b) => b,
      new Metadata(),
      { deadline },
    );
    const files = new Map<string, Uint8Array>();
    const order: string[] = [];
    const asked = new Set<string>();
    const services: string[] = [];
    let pending = 0;
    let bytes = 0;
    let done = false;
    const finish = (answer: ReflectedDescriptors | ReflectionFailure) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      stream.cancel();
      resolve(answer);
    };
    const onAbort = () => finish({ error: 'aborted', unavailable: false, code: null });
    signal.addEventListener('abort', onAbort, { once: true });
    const ask = (field: number, value: string) => {
      pending++;
      stream.write(encodeStringField(field, value));
    };
    const fail = (error: string) =>
      finish({ error: `reflection (${service}): ${error}`, unavailable: false, code: null });

    stream.on('data', (message: Buffer) => {
      if (done) return;
      pending--;
      try {
        for (const field of readFields(message)) {
          if (field.bytes === null) continue;
          if (field.field === 7) {
            let code = 0;
            let text = '';
            for (const f of readFields(field.bytes)) {
              if (f.field === 1 && f.varint !== null) code = f.varint;
              if (f.field === 2) text = fieldText(f);
            }
            fail(
              `the server could not give the descriptor (${code} ${grpcStatus[code] ?? ''}: ${text.slice(0, 200)})`,
            );
            return;
          }
          if (field.field === 6) {
            for (const entry of readFields(field.bytes)) {
              if (entry.field !== 1 || entry.bytes === null || services.length >= 100) continue;
              for (const f of readFields(entry.bytes))
                if (f.field === 1) services.push(fieldText(f).slice(0, 512));
            }
          }
          if (field.field === 4) {
            for (const entry of readFields(field.bytes)) {
              if (entry.field !== 1 || entry.bytes === null) continue;
              const { name, dependencies } = fileDescriptorNames(entry.bytes);
              if (files.has(name)) continue;
              bytes += entry.bytes.byteLength;
              if (files.size >= maxFiles || bytes > maxBytes) {
                fail(`the descriptors are larger than ${maxFiles} files or ${maxBytes} bytes`);
                return;
              }
              files.set(name, Uint8Array.from(entry.bytes));
              order.push(name);
              for (const dependency of dependencies) asked.add(dependency);
            }
          }
        }
      } catch (err) {
        if (err instanceof WireFormatError) {
          fail(`malformed answer (${err.message})`);
          return;
        }
        throw err;
      }
      for (const name of asked) {
        if (!files.has(name)) {
          asked.delete(name);
          ask(FILE_BY_FILENAME, name);
        }
      }
      if (pending === 0) {
        if (order.length === 0) {
          fail(`no descriptor of ${symbol}`);
          return;
        }
        const missing = [...files.values()]
          .flatMap((f) => fileDescriptorNames(f).dependencies)
          .filter((d) => !files.has(d));
        if (missing.length > 0) {
          fail(`the server did not give ${missing.slice(0, 3).join(', ')}`);
          return;
        }
        finish({ files: order.map((n) => files.get(n) as Uint8Array), services, reflectionService: service });
      }
    });
    stream.on('error', (err: ServiceError) => {
      finish({
        error: `reflection (${service}): ${err.code} ${grpcStatus[err.code] ?? ''}: ${err.details}`,
        unavailable: err.code === grpcStatus.UNIMPLEMENTED,
        code: err.code,
      });
    });
    stream.on('end', () => fail('the server ended the stream before answering'));
    ask(LIST_SERVICES, '');
    ask(FILE_CONTAINING_SYMBOL, symbol);
  });
}
