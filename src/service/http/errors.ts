import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';

/**
 * The spec's error body (docs/api.md, "Errors"): `statusCode`, `error`
 * (the status label), `message`, `attributes`. Validation errors name the
 * offending field in `attributes.field` and where it was (`attributes.in`).
 */
export type ErrorBody = {
  statusCode: number;
  error: string;
  message: string;
  attributes: Record<string, unknown>;
};

const LABELS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  411: 'Length Required',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** An error a route throws on purpose; the error handler answers it with the spec's body. */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly attributes: Record<string, unknown>;
  constructor(statusCode: number, message: string, attributes: Record<string, unknown> = {}) {
    super(message);
    this.name = 'HttpError';
    this.statusCode = statusCode;
    this.attributes = attributes;
  }
}

/** 400 for a value that breaks a rule JSON Schema cannot express (cross-field rules). */
export function badField(field: string, message: string, rule: string, location = 'body'): HttpError {
  return new HttpError(400, `${location}.${field} ${message}`, { field, in: location, rule });
}

/** 404 that never says whether the id exists in another account. */
export function notFound(what: string, id: string | number): HttpError {
  return new HttpError(404, `${what} ${id} not found`, { id: String(id) });
}

/** Builds the spec's error body for a status code. */
export function errorBody(
  statusCode: number,
  message: string,
  attributes: Record<string, unknown> = {},
): ErrorBody {
  return { statusCode, error: LABELS[statusCode] ?? 'Error', message, attributes };
}

/** Sends the spec's error body. */
export function sendError(
  reply: FastifyReply,
  statusCode: number,
  message: string,
  attributes: Record<string, unknown> = {},
): FastifyReply {
  return reply
    .code(statusCode)
    .type('application/json')
    .send(errorBody(statusCode, message, attributes));
}

export type AjvError = {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
};

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

/** Installs the error handler and 404 handler that answer every error with the spec's body. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(
    (err: FastifyError & { validation?: AjvError[]; validationContext?: string }, request, reply) => {
      if (err instanceof HttpError) return sendError(reply, err.statusCode, err.message, err.attributes);
      if (err.validation && err.validation.length > 0) {
        const first = err.validation[0]!;
        const location = err.validationContext ?? 'body';
        const field = fieldOf(first);
        return sendError(reply, 400, `${location}${field ? `.${field}` : ''} ${describeAjvError(first)}`, {
          field,
          in: location,
          rule: first.keyword,
        });
      }
      const status = err.statusCode ?? 500;
      if (status >= 500) {
        request.log.error({ err }, 'request failed');
        return sendError(reply, 500, 'internal error');
      }
      // Fastify's own client errors: bad JSON, wrong content type, body too large.
      return sendError(reply, status, err.message, err.code ? { code: err.code } : {});
    },
  );
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 404, `route ${request.method} ${request.url.split('?')[0]} not found`),
  );
}

/**
 * Throws the same 400 a schema failure in a route gives, for values validated
 * after the route's own schema (for example a `request` checked against the
 * check's type once the stored check is known).
 */
export function throwValidation(errors: AjvError[], prefix: string, location = 'body'): never {
  const first = errors[0]!;
  const inner = fieldOf(first);
  const field = [prefix, inner].filter(Boolean).join('.');
  throw new HttpError(400, `${location}.${field} ${describeAjvError(first)}`, {
    field,
    in: location,
    rule: first.keyword,
  });
}
