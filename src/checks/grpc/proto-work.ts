import { createHash } from 'node:crypto';
import {
  fromJSON,
  loadFileDescriptorSetFromBuffer,
  type MethodDefinition,
  type Options,
  type PackageDefinition,
} from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import type { Assertion, AssertionResult } from '../../protocol/index.js';
import { fileDescriptorSet } from '../../net/grpc/wire.js';
import { evaluateAssertions, jsonPathSource } from '../assertions/index.js';

/**
 * The message types of a call: the `protoContent` text, or file descriptors a server gave by
 * reflection (serialized FileDescriptorProtos).
 */
export type ProtoSchema = { kind: 'proto'; text: string } | { kind: 'descriptors'; files: Uint8Array[] };

/** Encode `message` (JSON) as the request of `service`/`method`. */
export type EncodeTask = {
  kind: 'encode';
  schema: ProtoSchema;
  service: string;
  method: string;
  message: string;
};
/**
 * Decode `bytes` as the response of `service`/`method`, to JSON of at most `maxChars` characters, and
 * evaluate `assertions` (JSON_RESPONSE: a JSONPath over the whole message) against it.
 */
export type DecodeTask = {
  kind: 'decode';
  schema: ProtoSchema;
  service: string;
  method: string;
  bytes: Uint8Array;
  maxChars: number;
  assertions: Assertion[];
};
/** A task of the proto workers. */
export type ProtoTask = EncodeTask | DecodeTask;

/** The request encoded: the call's path and message bytes, and the methods the service has (at most 100). */
export type Encoded = { path: string; request: Uint8Array; methods: string[] };
/** The response as JSON text (cut to `maxChars`), whether it was cut, and the task's assertions evaluated. */
export type Decoded = { json: string; truncated: boolean; assertions: AssertionResult[] };
/** What went wrong, in one line. */
export type ProtoFailure = { error: string };

/** How messages map to JSON: 64-bit integers and enums as strings, bytes as base64, defaults included. */
const LOADER_OPTIONS: Options = {
  keepCase: true,
  longs: String,
  enums: String,
  bytes: String,
  defaults: true,
  oneofs: true,
};

/** Package definitions of recent schemas by hash: a run encodes and decodes with the same one. */
const cache = new Map<string, PackageDefinition>();
const CACHE_ENTRIES = 16;

function schemaKey(schema: ProtoSchema): string {
  const hash = createHash('sha256');
  if (schema.kind === 'proto') hash.update('proto\0').update(schema.text);
  else for (const file of schema.files) hash.update(`file ${file.byteLength}\0`).update(file);
  return hash.digest('hex');
}

/**
 * `protoContent` as a package definition. Imports of Google's well-known types
 * (`google/protobuf/timestamp.proto`, …) are provided; any other import cannot be, and its types are
 * then missing.
 * @throws Error naming the line of a syntax error or the type that is missing.
 */
function fromProtoText(text: string): PackageDefinition {
  const root = new protobuf.Root();
  const parsed = protobuf.parse(text, root, { keepCase: true });
  for (const name of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) {
    const common = protobuf.common.get(name);
    if (common?.nested) root.addJSON(common.nested);
    else throw new Error(`imports ${name}, which protoContent cannot include (only google/protobuf/*.proto)`);
  }
  root.resolveAll();
  return fromJSON(root.toJSON(), LOADER_OPTIONS);
}

function definitionOf(schema: ProtoSchema): PackageDefinition {
  const key = schemaKey(schema);
  const known = cache.get(key);
  if (known) return known;
  const definition =
    schema.kind === 'proto'
      ? fromProtoText(schema.text)
      : loadFileDescriptorSetFromBuffer(fileDescriptorSet(schema.files), LOADER_OPTIONS);
  cache.set(key, definition);
  if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
  return definition;
}

function methodOf(
  schema: ProtoSchema,
  service: string,
  method: string,
): { definition: MethodDefinition<object, object>; methods: string[] } | ProtoFailure {
  let definition: PackageDefinition;
  try {
    definition = definitionOf(schema);
  } catch (err) {
    const where = schema.kind === 'proto' ? 'protoContent' : 'the reflected descriptors';
    return { error: `${where} could not be read: ${oneLine(err)}` };
  }
  const entry = Object.hasOwn(definition, service) ? definition[service] : undefined;
  if (entry === undefined || 'format' in entry) {
    const services = Object.entries(definition)
      .filter(([, value]) => !('format' in value))
      .map(([name]) => name);
    return {
      error: `no service ${service}; the definitions have ${services.slice(0, 10).join(', ') || 'none'}`,
    };
  }
  const methods = Object.keys(entry).slice(0, 100);
  const found = Object.hasOwn(entry, method)
    ? (entry as Record<string, MethodDefinition<object, object>>)[method]
    : undefined;
  if (found === undefined) {
    return { error: `service ${service} has no method ${method}; it has ${methods.slice(0, 20).join(', ')}` };
  }
  if (found.requestStream || found.responseStream) {
    return { error: `${service}/${method} is a streaming method; only unary methods can be called` };
  }
  return { definition: found, methods };
}

function oneLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').slice(0, 300);
}

/** Encodes a request (see EncodeTask). Never throws: a failure is `{ error }`. */
export function encodeRequest(task: EncodeTask): Encoded | ProtoFailure {
  const found = methodOf(task.schema, task.service, task.method);
  if ('error' in found) return found;
  let value: unknown;
  try {
    value = task.message.trim() === '' ? {} : JSON.parse(task.message);
  } catch (err) {
    return { error: `message is not JSON: ${oneLine(err)}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { error: 'message must be a JSON object' };
  }
  try {
    const request = found.definition.requestSerialize(value);
    return { path: found.definition.path, request: new Uint8Array(request), methods: found.methods };
  } catch (err) {
    return { error: `message does not fit ${task.service}/${task.method}'s request type: ${oneLine(err)}` };
  }
}

/** Decodes a response (see DecodeTask). Never throws: a failure is `{ error }`. */
export function decodeResponse(task: DecodeTask): Decoded | ProtoFailure {
  const found = methodOf(task.schema, task.service, task.method);
  if ('error' in found) return found;
  try {
    const message = found.definition.responseDeserialize(Buffer.from(task.bytes));
    const json = JSON.stringify(message);
    const assertions = evaluateAssertions(task.assertions, {
      JSON_RESPONSE: jsonPathSource(message),
    }).results;
    return json.length > task.maxChars
      ? { json: json.slice(0, task.maxChars), truncated: true, assertions }
      : { json, truncated: false, assertions };
  } catch (err) {
    return { error: `the response is not a ${task.service}/${task.method} response: ${oneLine(err)}` };
  }
}

/** Runs one task (the worker's entry calls it). */
export function doProtoWork(task: ProtoTask): Encoded | Decoded | ProtoFailure {
  return task.kind === 'encode' ? encodeRequest(task) : decodeResponse(task);
}
