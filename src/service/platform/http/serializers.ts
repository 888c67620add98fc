import fastJsonStringify from 'fast-json-stringify';

/** A compiled answer serializer: the answer as JSON, only the fields its schema declares (or allows). */
type Serializer = (answer: unknown) => string;

type JsonSchema = Record<string, unknown>;

/** Serializers compiled in this process, by the schema object they were compiled from. */
const compiled = new WeakMap<object, Serializer>();

/**
 * The service's serializer compiler: fastify's own (fast-json-stringify, no shared schemas), compiled once per
 * schema object in the process instead of once per route and per app. Many routes answer the same schema (a check
 * is answered by about thirty routes, each a `oneOf` of one schema per check type), and tests build many apps:
 * compiling each anew cost 0.8 s of every start.
 *
 * A `oneOf` (or `anyOf`) whose branches one property tells apart ({@link discriminatorOf}), answered as it is or
 * as the items of an array, gets one serializer per branch, picked by that property's value
 * ({@link discriminatedSerializer}). fast-json-stringify would pick the branch by validating the whole answer
 * against each branch in turn with Ajv, and compiles those validators on the first answer of each route: the
 * first `GET /v1/checks` of a process took 400–500 ms, 300 of them in Ajv's code generation, and every check
 * of a list was validated up to thirteen times. An answer that matches its branch is written byte for byte as
 * before; one that does not (a field its branch forbids) is now written by the branch its discriminator names,
 * as a discriminator means in OpenAPI, where fast-json-stringify refused it with a 500.
 */
export function cachedSerializerCompiler({ schema }: { schema: object }): Serializer {
  let serializer = compiled.get(schema);
  if (!serializer) {
    serializer = discriminatedSerializer(schema as JsonSchema) ?? compile(schema as JsonSchema);
    compiled.set(schema, serializer);
  }
  return serializer;
}

function compile(schema: JsonSchema): Serializer {
  return fastJsonStringify(schema as unknown as Parameters<typeof fastJsonStringify>[0]) as Serializer;
}

/** Keywords beside a `oneOf` that change nothing of what is written (fast-json-stringify merges the others into each branch). */
const ANNOTATIONS: ReadonlySet<string> = new Set([
  'title',
  'description',
  '$comment',
  'examples',
  'deprecated',
]);

/**
 * The property that tells the branches of a union apart, with each branch's value (by index): a string every
 * branch requires and pins to one value (`const`, or an `enum` of one), a different value in each branch
 * (`checkType` of a check: `"API"`, `"URL"`…). Null when no property does, or when a branch refers to another
 * schema (`$ref`: its target is the union's document, which a branch compiled alone does not have).
 */
export function discriminatorOf(branches: readonly unknown[]): { key: string; values: string[] } | null {
  const first = branches[0] as JsonSchema | undefined;
  const firstProperties = first?.properties as Record<string, JsonSchema> | undefined;
  if (branches.length < 2 || firstProperties === undefined) return null;
  if (branches.some((branch) => JSON.stringify(branch).includes('"$ref"'))) return null;
  for (const key of Object.keys(firstProperties)) {
    const values: string[] = [];
    for (const branch of branches as JsonSchema[]) {
      const property = (branch.properties as Record<string, JsonSchema> | undefined)?.[key];
      const value =
        property?.const !== undefined
          ? property.const
          : Array.isArray(property?.enum) && property.enum.length === 1
            ? property.enum[0]
            : undefined;
      const required = Array.isArray(branch.required) && (branch.required as unknown[]).includes(key);
      if (typeof value !== 'string' || !required || values.includes(value)) break;
      values.push(value);
    }
    if (values.length === branches.length) return { key, values };
  }
  return null;
}

/** The discriminated union of `schema` (its `oneOf` or `anyOf` with annotations only beside it), or null. */
function unionOf(schema: JsonSchema): { branches: JsonSchema[]; key: string; values: string[] } | null {
  const branches = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (!Array.isArray(branches) || (schema.oneOf !== undefined && schema.anyOf !== undefined)) return null;
  for (const keyword of Object.keys(schema)) {
    if (keyword !== 'oneOf' && keyword !== 'anyOf' && !ANNOTATIONS.has(keyword)) return null;
  }
  const discriminator = discriminatorOf(branches);
  return discriminator === null ? null : { branches, ...discriminator };
}

/**
 * A serializer of a discriminated union (or an array of one, and nothing else beside `items` but annotations)
 * that writes each value with its branch's own compiled serializer, chosen by the discriminator's value; null
 * for any other schema. A value the discriminator names no branch for (or a list that is not an array) goes to
 * the whole schema's fast-json-stringify serializer, compiled then: it writes or refuses it as before.
 */
function discriminatedSerializer(schema: JsonSchema): Serializer | null {
  const isList =
    schema.type === 'array' &&
    typeof schema.items === 'object' &&
    schema.items !== null &&
    Object.keys(schema).every(
      (keyword) => keyword === 'type' || keyword === 'items' || ANNOTATIONS.has(keyword),
    );
  const union = unionOf((isList ? schema.items : schema) as JsonSchema);
  if (union === null) return null;
  const byValue = new Map<unknown, Serializer>(
    union.branches.map((branch, index) => [union.values[index], compile(branch)]),
  );
  let whole: Serializer | undefined;
  const fallback = (answer: unknown) => {
    whole ??= compile(schema);
    return whole(answer);
  };
  const branchOf = (value: unknown): Serializer | undefined =>
    value !== null && typeof value === 'object' ? byValue.get((value as JsonSchema)[union.key]) : undefined;
  if (!isList) {
    return (answer) => {
      const serializer = branchOf(answer);
      return serializer === undefined ? fallback(answer) : serializer(answer);
    };
  }
  return (answer) => {
    if (!Array.isArray(answer)) return fallback(answer);
    const parts: string[] = new Array(answer.length);
    for (let i = 0; i < answer.length; i++) {
      const serializer = branchOf(answer[i]);
      if (serializer === undefined) return fallback(answer);
      parts[i] = serializer(answer[i]);
    }
    return `[${parts.join(',')}]`;
  };
}
