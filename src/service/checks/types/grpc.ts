import { Type } from '@sinclair/typebox';
import {
  GRPC_ASSERTION_SOURCES,
  GRPC_MAX_MESSAGE_CHARS,
  GRPC_MAX_PROTO_CHARS,
  GRPC_MODES,
  IP_FAMILIES,
} from '../../../protocol/index.js';
import { badField } from '../../platform/http/errors.js';
import { Ignored, StringEnum, strict } from '../../platform/http/schema-helpers.js';
import { assertions, MINUTE_FREQUENCIES, uptimeCreateBody } from './common.js';

/** A metadata entry a gRPC monitor sends (docs/checks.md, "gRPC"): `{{VAR}}` allowed in both. */
const GrpcMetadataBodySchema = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9_.{}$ -]+$' }),
    value: Type.String({ maxLength: 8192 }),
  },
  strict,
);

/**
 * `grpcConfig` of a gRPC monitor (docs/checks.md, "gRPC"): BEHAVIOR calls `method` with `message` (JSON)
 * using the types of `protoContent`, or the server's reflection without it; HEALTH calls the standard
 * health service for `service`. The fields of the other mode are refused (grpcRules).
 */
const GrpcConfigBodySchema = Type.Object(
  {
    mode: Type.Optional(StringEnum(GRPC_MODES, { default: 'BEHAVIOR' })),
    tls: Type.Optional(Type.Boolean({ default: false })),
    metadata: Type.Optional(Type.Array(GrpcMetadataBodySchema, { maxItems: 64, default: [] })),
    serviceDefinition: Type.Optional(Type.String({ maxLength: 1024, default: '' })),
    method: Type.Optional(Type.String({ maxLength: 1024, default: '' })),
    protoContent: Type.Optional(Type.String({ maxLength: GRPC_MAX_PROTO_CHARS, default: '' })),
    message: Type.Optional(Type.String({ maxLength: GRPC_MAX_MESSAGE_CHARS, default: '' })),
    service: Type.Optional(Type.String({ maxLength: 1024, default: '' })),
    storeResponseBody: Ignored(Type.Boolean(), "the hosted API's response storage setting"),
  },
  strict,
);

/**
 * gRPC request (docs/checks.md, "gRPC"): `url` the host (no scheme, port or path), `port` a number or a
 * `{{VAR}}` template, `timeout` seconds for the whole call.
 */
export const GrpcRequestBodySchema = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      pattern: '^[^\\s/:]+$|^[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*$|^\\[[0-9A-Fa-f:.]+\\]$',
    }),
    port: Type.Union([
      Type.Integer({ minimum: 1, maximum: 65535 }),
      Type.String({ pattern: '^\\{\\{\\s*[A-Za-z_][A-Za-z0-9_]*\\s*\\}\\}$', maxLength: 256 }),
    ]),
    ipFamily: Type.Optional(StringEnum(IP_FAMILIES, { default: 'IPv4' })),
    skipSSL: Type.Optional(Type.Boolean({ default: false })),
    timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, default: 10 })),
    grpcConfig: GrpcConfigBodySchema,
    assertions: assertions(GRPC_ASSERTION_SOURCES),
  },
  strict,
);

/** A method a BEHAVIOR monitor can call: `/pkg.Service/Method`, `pkg.Service/Method` or `pkg.Service.Method`. */
const QUALIFIED_METHOD = /^\/?[A-Za-z_][A-Za-z0-9_.]*[/.][A-Za-z_][A-Za-z0-9_]*$/;
/** A method named alone, with `serviceDefinition` naming its service. */
const BARE_METHOD = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A fully-qualified service name. */
const SERVICE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * The rules of a gRPC monitor that JSON Schema does not express, on a new check and a merged update:
 * BEHAVIOR needs a `method` that names its service (or `serviceDefinition`) and a `message` that is a
 * JSON object, and takes no `service`; HEALTH takes none of `method`, `serviceDefinition`,
 * `protoContent` and `message`.
 * @throws HttpError 400 naming the field.
 */
export function grpcRules(doc: Record<string, unknown>): void {
  const request = (doc.request ?? {}) as Record<string, unknown>;
  const config = (request.grpcConfig ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof config[name] === 'string' ? (config[name] as string) : '');
  const field = (name: string) => `request.grpcConfig.${name}`;
  if ((config.mode ?? 'BEHAVIOR') === 'HEALTH') {
    for (const name of ['method', 'serviceDefinition', 'protoContent', 'message']) {
      if (text(name) !== '') throw badField(field(name), 'is not taken in HEALTH mode', 'mode');
    }
    const service = text('service');
    if (service !== '' && !SERVICE_NAME.test(service)) {
      throw badField(field('service'), 'must be a service name such as package.Service', 'pattern');
    }
    return;
  }
  if (text('service') !== '') throw badField(field('service'), 'is taken in HEALTH mode only', 'mode');
  const method = text('method').trim();
  const serviceDefinition = text('serviceDefinition').trim();
  if (method === '') throw badField(field('method'), 'is required in BEHAVIOR mode', 'required');
  if (serviceDefinition !== '' && !SERVICE_NAME.test(serviceDefinition)) {
    throw badField(field('serviceDefinition'), 'must be a service name such as package.Service', 'pattern');
  }
  if (!QUALIFIED_METHOD.test(method) && !(serviceDefinition !== '' && BARE_METHOD.test(method))) {
    throw badField(
      field('method'),
      'must name its service: /package.Service/Method, or Method with serviceDefinition',
      'pattern',
    );
  }
  const message = text('message');
  if (message.trim() !== '' && !message.includes('{{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      throw badField(field('message'), 'must be a JSON object', 'format');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw badField(field('message'), 'must be a JSON object', 'format');
    }
  }
}

/** `POST /v1/checks/grpc`: degraded 3000 ms, max 5000 ms by default, as the hosted API's fixtures have them. */
export const CreateGrpcCheckBody = uptimeCreateBody(GrpcRequestBodySchema, MINUTE_FREQUENCIES, 3000, 5000);
