import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';

/**
 * The fastify instance every `/v1` route plugin registers on: the TypeBox type provider
 * (`app.withTypeProvider<TypeBoxTypeProvider>()` in app.ts) types `request.body`,
 * `request.params` and `request.query` from the route's TypeBox schemas, and a handler's
 * return value from its response schema. Types only: validation stays with the ajv compilers
 * that app.ts installs (http/validation.ts: bodies without coercion, the rest with).
 */
export type ServiceApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
