import fastJsonStringify from 'fast-json-stringify';

/** A compiled answer serializer: the answer as JSON, only the fields its schema declares (or allows). */
type Serializer = (answer: unknown) => string;

/** Serializers compiled in this process, by the schema object they were compiled from. */
const compiled = new WeakMap<object, Serializer>();

/**
 * The service's serializer compiler: fastify's own (fast-json-stringify, no shared schemas), compiled once per
 * schema object in the process instead of once per route and per app. Many routes answer the same schema (a check
 * is answered by about thirty routes, each a `oneOf` of one schema per check type), and tests build many apps:
 * compiling each anew cost 0.8 s of every start.
 */
export function cachedSerializerCompiler({ schema }: { schema: object }): Serializer {
  let serializer = compiled.get(schema);
  if (!serializer) {
    serializer = fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0]) as Serializer;
    compiled.set(schema, serializer);
  }
  return serializer;
}
