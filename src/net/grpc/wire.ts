/**
 * The few protocol-buffer messages the gRPC client writes and reads itself, in the wire format
 * (https://protobuf.dev/programming-guides/encoding/): the health check and the server-reflection
 * messages, and the name and dependencies of a FileDescriptorProto. Every reader is linear in its
 * input and never recurses, so a hostile reply costs at most one pass over its (bounded) bytes.
 */

/** A message that is not valid protocol-buffer wire format. */
export class WireFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireFormatError';
  }
}

/** One field as read: its number, and its value (a varint as a number, a length-delimited one as bytes). */
export type WireField = { field: number; varint: number | null; bytes: Uint8Array | null };

/** Reads a varint at `offset`: its value (numbers beyond 2^53 lose precision) and the offset after it. */
function readVarint(buf: Uint8Array, offset: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = offset; i < buf.length && i < offset + 10; i++) {
    const byte = buf[i] as number;
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return [value, i + 1];
    scale *= 128;
  }
  throw new WireFormatError('truncated varint');
}

/**
 * The top-level fields of one message, in order. Varints and length-delimited fields are kept;
 * fixed32/fixed64 fields are skipped. Groups (deprecated) are refused.
 * @throws WireFormatError on a truncated or malformed message.
 */
export function readFields(buf: Uint8Array): WireField[] {
  const fields: WireField[] = [];
  let offset = 0;
  while (offset < buf.length) {
    const [key, next] = readVarint(buf, offset);
    offset = next;
    const field = Math.floor(key / 8);
    const wireType = key % 8;
    if (wireType === 0) {
      const [value, after] = readVarint(buf, offset);
      fields.push({ field, varint: value, bytes: null });
      offset = after;
    } else if (wireType === 2) {
      const [length, after] = readVarint(buf, offset);
      if (after + length > buf.length) throw new WireFormatError('truncated length-delimited field');
      fields.push({ field, varint: null, bytes: buf.subarray(after, after + length) });
      offset = after + length;
    } else if (wireType === 1) {
      offset += 8;
    } else if (wireType === 5) {
      offset += 4;
    } else {
      throw new WireFormatError(`unsupported wire type ${wireType}`);
    }
    if (offset > buf.length) throw new WireFormatError('truncated fixed-size field');
  }
  return fields;
}

function varintBytes(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return out;
}

/** A message of one length-delimited (string or bytes) field `field` holding `value`. */
export function encodeStringField(field: number, value: string | Uint8Array): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([Buffer.from([...varintBytes(field * 8 + 2), ...varintBytes(bytes.length)]), bytes]);
}

const utf8 = new TextDecoder('utf-8');

/** A length-delimited field as UTF-8 text (invalid sequences replaced). */
export function fieldText(field: WireField): string {
  return field.bytes === null ? '' : utf8.decode(field.bytes);
}

/** `grpc.health.v1.HealthCheckRequest { string service = 1; }` for `service` ('' the whole server). */
export function encodeHealthCheckRequest(service: string): Buffer {
  return service === '' ? Buffer.alloc(0) : encodeStringField(1, service);
}

/** Labels of `grpc.health.v1.HealthCheckResponse.ServingStatus` by number. */
export const HEALTH_STATUS_LABELS: Readonly<Record<number, string>> = {
  0: 'UNKNOWN',
  1: 'SERVING',
  2: 'NOT_SERVING',
  3: 'SERVICE_UNKNOWN',
};

/**
 * The `status` of a `grpc.health.v1.HealthCheckResponse` (0 UNKNOWN when absent, as proto3 has it).
 * @throws WireFormatError on a malformed message.
 */
export function decodeHealthCheckResponse(buf: Uint8Array): number {
  let status = 0;
  for (const f of readFields(buf)) if (f.field === 1 && f.varint !== null) status = f.varint;
  return status;
}

/** The name and the `dependency` file names of a serialized `google.protobuf.FileDescriptorProto`. */
export function fileDescriptorNames(buf: Uint8Array): { name: string; dependencies: string[] } {
  let name = '';
  const dependencies: string[] = [];
  for (const f of readFields(buf)) {
    if (f.field === 1 && f.bytes !== null) name = fieldText(f);
    else if (f.field === 3 && f.bytes !== null) dependencies.push(fieldText(f));
  }
  return { name, dependencies };
}

/**
 * A serialized `google.protobuf.FileDescriptorSet` of `files` (serialized FileDescriptorProtos):
 * the set is `repeated FileDescriptorProto file = 1`, so each file is written as field 1.
 */
export function fileDescriptorSet(files: readonly Uint8Array[]): Buffer {
  return Buffer.concat(files.map((file) => encodeStringField(1, file)));
}
