import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { SERVICE_ERROR_CODES, type ServiceErrorCode } from './error-codes.js';

/**
 * The spec's error body (docs/api.md, "Errors"): `statusCode`, `error`
 * (the status label), `message`, `attributes`. `attributes.code` is always the
 * error's code (http/error-codes.ts); validation errors name the offending field in
 * `attributes.field`, where it was (`attributes.in`) and the rule it broke (`attributes.rule`).
 */
type ErrorBody = {
  statusCode: number;
  error: string;
  message: string;
  attributes: Record<string, unknown> & { code: ServiceErrorCode };
};

/**
 * An error a route throws on purpose; the error handler answers it with the spec's body,
 * the status its code has in SERVICE_ERROR_CODES and the code in `attributes.code`.
 */
export class HttpError extends Error {
  readonly code: ServiceErrorCode;
  readonly statusCode: number;
  /** What the body's `attributes` hold: `code` first, then the ones given. */
  readonly attributes: Record<string, unknown>;
  constructor(code: ServiceErrorCode, message: string, attributes: Record<string, unknown> = {}) {
    super(message);
    this.name = 'HttpError';
    this.code = code;
    this.statusCode = SERVICE_ERROR_CODES[code].status;
    this.attributes = { code, ...attributes };
  }
}

/**
 * 400 OUTPOST_ERR_VALIDATION for a value that breaks a rule JSON Schema cannot express
 * (cross-field rules): message `<location>.<field> <message>`, attributes `field`, `in`, `rule`.
 */
export function badField(field: string, message: string, rule: string, location = 'body'): HttpError {
  return new HttpError('OUTPOST_ERR_VALIDATION', `${location}.${field} ${message}`, {
    field,
    in: location,
    rule,
  });
}

/** 404 OUTPOST_ERR_NOT_FOUND that never says whether the id exists in another account. */
export function notFound(what: string, id: string | number): HttpError {
  return new HttpError('OUTPOST_ERR_NOT_FOUND', `${what} ${id} not found`, { id: String(id) });
}

/** Builds the spec's error body of a code: its status, the status label, `attributes.code`. */
function errorBody(
  code: ServiceErrorCode,
  message: string,
  attributes: Record<string, unknown> = {},
): ErrorBody {
  const statusCode = SERVICE_ERROR_CODES[code].status;
  return {
    statusCode,
    error: STATUS_CODES[statusCode] ?? 'Error',
    message,
    attributes: { code, ...attributes },
  };
}

/** Sends the spec's error body of a code with the code's status. */
export function sendError(
  reply: FastifyReply,
  code: ServiceErrorCode,
  message: string,
  attributes: Record<string, unknown> = {},
): FastifyReply {
  const body = errorBody(code, message, attributes);
  return reply.code(body.statusCode).type('application/json').send(body);
}

/** One error of an ajv validator (the fields the answers use). */
export type AjvError = {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
};

/** Dotted path of the value an ajv error is about (`request.headers[0].key`); '' for the root. */
export function fieldOf(e: AjvError): string {
  const path = e.instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (e.keyword === 'required' && typeof e.params.missingProperty === 'string')
    path.push(e.params.missingProperty);
  if (e.keyword === 'additionalProperties' && typeof e.params.additionalProperty === 'string') {
    path.push(e.params.additionalProperty);
  }
  return path.join('.').replace(/\.(\d+)(?=\.|$)/g, '[$1]');
}

/** What an ajv error says is wrong, worded for a person (`is required`, `must be one of …`). */
export function describeAjvError(e: AjvError): string {
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'enum':
      return `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return e.message ?? 'is invalid';
  }
}

/**
 * The 400 OUTPOST_ERR_VALIDATION of the first of `errors`, as every schema failure is answered:
 * message `<location>.<field> <what is wrong>`, attributes `field` (dotted, under `prefix` when the
 * value validated was a part of the request, such as a check's `request`), `in`, `rule`.
 */
export function validationError(errors: readonly AjvError[], location: string, prefix = ''): HttpError {
  const first = errors[0]!;
  const field = [prefix, fieldOf(first)].filter(Boolean).join('.');
  return new HttpError(
    'OUTPOST_ERR_VALIDATION',
    `${location}${field ? `.${field}` : ''} ${describeAjvError(first)}`,
    {
      field,
      in: location,
      rule: first.keyword,
    },
  );
}

/**
 * Codes of the framework's own client errors by status (unreadable JSON, a wrong content type,
 * a body or path parameter too large); any other client status the framework gives is answered
 * as OUTPOST_ERR_MALFORMED_REQUEST.
 */
const FRAMEWORK_CODES: Record<number, ServiceErrorCode> = {
  413: 'OUTPOST_ERR_PAYLOAD_TOO_LARGE',
  414: 'OUTPOST_ERR_URI_TOO_LONG',
  415: 'OUTPOST_ERR_UNSUPPORTED_MEDIA_TYPE',
};

type RequestError = FastifyError & { validation?: AjvError[]; validationContext?: string };

/**
 * Installs the error handler and 404 handler that answer every error with the spec's body and
 * its code. Framework errors raised before routing (a URL that does not decode, a path parameter
 * over the router's limit) reach the same handler through fastify's `frameworkErrors` option,
 * which `build` sets to {@link answerFrameworkError}.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: RequestError, request, reply) => {
    if (err instanceof HttpError) return sendError(reply, err.code, err.message, err.attributes);
    if (err.validation && err.validation.length > 0) {
      const invalid = validationError(err.validation, err.validationContext ?? 'body');
      return sendError(reply, invalid.code, invalid.message, invalid.attributes);
    }
    const status = err.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err }, 'request failed');
      return sendError(reply, 'OUTPOST_ERR_INTERNAL', 'internal error');
    }
    return answerFrameworkError(err, request, reply);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      'OUTPOST_ERR_NOT_FOUND',
      `route ${request.method} ${request.url.split('?')[0]} not found`,
    ),
  );
}

/**
 * Answers one of fastify's own client errors (bad JSON, wrong content type, body too large,
 * a URL that does not decode) with the spec's body; fastify's `frameworkErrors` option.
 */
export function answerFrameworkError(
  err: FastifyError,
  _request: unknown,
  reply: FastifyReply,
): FastifyReply {
  const code = FRAMEWORK_CODES[err.statusCode ?? 400] ?? 'OUTPOST_ERR_MALFORMED_REQUEST';
  return sendError(reply, code, err.message);
}
