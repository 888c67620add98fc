import { type TSchema, Type } from '@sinclair/typebox';
import { CHECK_TYPES, type CheckType } from '../../../protocol/index.js';
import { Nullable, StringEnum } from '../../platform/http/schema-helpers.js';

/**
 * The parts of a check's answer (docs/api.md, "Check"): the fields every check answers, and the answer of
 * one type built from its create body (responses.ts joins them over the registry), so a field added to a
 * create body is answered and documented with no other edit. Fastify serialises answers through them
 * (fast-json-stringify), and the OpenAPI document shows them, so generated clients get `request`,
 * `alertSettings`, `retryStrategy`, `script`, … typed. A leaf file (TypeBox, the protocol, the schema
 * helpers): the web app reads CheckSharedResponseSchema's static type through the module's schemas.ts.
 */

/** The fields every check answers (docs/api.md, "Check"), always present; a type's own are open. */
export const CheckSharedResponseSchema = Type.Object(
  {
    id: Type.String(),
    checkType: StringEnum(CHECK_TYPES),
    name: Type.String(),
    activated: Type.Boolean(),
    muted: Type.Boolean(),
    doubleCheck: Type.Boolean(),
    shouldFail: Type.Boolean(),
    locations: Nullable(Type.Array(Type.String())),
    privateLocations: Nullable(Type.Array(Type.String())),
    tags: Type.Array(Type.String()),
    frequency: Type.Integer(),
    frequencyOffset: Nullable(Type.Integer()),
    runParallel: Type.Boolean(),
    groupId: Nullable(Type.Integer()),
    groupOrder: Nullable(Type.Integer()),
    runtimeId: Nullable(Type.String()),
    description: Nullable(Type.String()),
    alertChannelSubscriptions: Type.Array(
      Type.Object({ alertChannelId: Type.Integer(), activated: Type.Boolean() }),
    ),
    alertChannels: Type.Object({
      email: Type.Array(Type.Object({ address: Type.String() })),
      webhook: Type.Array(Type.Record(Type.String(), Type.Unknown())),
      slack: Type.Array(Type.Object({ url: Type.String() })),
      sms: Type.Array(Type.Object({ number: Type.String(), name: Type.String() })),
    }),
    environmentVariables: Nullable(
      Type.Array(
        Type.Object({
          key: Type.String(),
          value: Type.String(),
          locked: Type.Optional(Type.Boolean()),
          secret: Type.Optional(Type.Boolean()),
        }),
      ),
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
    unservedLocations: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'Outpost: the run locations of the check that no connected agent serves now. Their runs are not run: they expire with that reason (GET /v1/checks/{id}/expired-runs).',
      }),
    ),
  },
  // Type-specific fields (request, thresholds, script, …) follow the create schema of the type.
  { additionalProperties: true },
);

/** A JSON Schema as plain data. */
type JsonSchema = Record<string, unknown>;

/**
 * Keywords that limit a value a client sends (lengths, ranges, patterns, item counts) and `default`:
 * left out of an answer's schema. A stored check passed them once, but a rule may have changed since, and a
 * serialiser picks a type's schema by validating the answer against it: an answer must never fail on a limit.
 * `default` would make the serialiser write a value the check does not hold.
 */
const REQUEST_ONLY_KEYWORDS = [
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'default',
] as const;

/**
 * A body schema as an answer's schema: a plain copy without REQUEST_ONLY_KEYWORDS, each object open
 * (`additionalProperties: true`, so the serialiser drops no field a check holds), its `readOnly` fields
 * (those the body accepts and ignores: schema-helpers.ts, `Ignored`) left out. Pure.
 */
export function answeredSchema(schema: unknown): JsonSchema {
  const copy = JSON.parse(JSON.stringify(schema)) as JsonSchema;
  return answered(copy);
}

function answered(schema: JsonSchema): JsonSchema {
  for (const keyword of REQUEST_ONLY_KEYWORDS) delete schema[keyword];
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties) {
    for (const [name, property] of Object.entries(properties)) {
      if (property.readOnly === true) {
        delete properties[name];
        continue;
      }
      answered(property);
    }
    if (Array.isArray(schema.required)) {
      schema.required = (schema.required as string[]).filter((name) => name in properties);
      if ((schema.required as string[]).length === 0) delete schema.required;
    }
  }
  if (schema.type === 'object' || properties) {
    if (typeof schema.additionalProperties !== 'object') schema.additionalProperties = true;
    else answered(schema.additionalProperties as JsonSchema);
  }
  for (const key of ['items', 'not'] as const) {
    if (schema[key] && typeof schema[key] === 'object') answered(schema[key] as JsonSchema);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (Array.isArray(schema[key])) for (const part of schema[key] as JsonSchema[]) answered(part);
  }
  if (schema.patternProperties && typeof schema.patternProperties === 'object') {
    for (const part of Object.values(schema.patternProperties as Record<string, JsonSchema>)) answered(part);
  }
  return schema;
}

/** The schema takes `null` (a `type` list holding "null", or an anyOf/oneOf branch of type null). */
function takesNull(schema: JsonSchema): boolean {
  if (schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'))) return true;
  const parts = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  return Array.isArray(parts) && parts.some(takesNull);
}

/** `schema` or null, as schema-helpers.ts `Nullable` writes it. */
function orNull(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') {
    const enumValues = Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {};
    return { ...schema, type: [schema.type, 'null'], ...enumValues };
  }
  return { anyOf: [schema, { type: 'null' }] };
}

/** `HEARTBEAT_CHECK` → `HeartbeatCheck`: the component name of a type's answer in the OpenAPI document. */
export function checkSchemaTitle(checkType: CheckType): string {
  const words = checkType.toLowerCase().split('_');
  return `${words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}Check`;
}

/**
 * Fields a type's answer has beyond its create body, by type: HEARTBEAT's `pingUrl` and `heartbeatState`, which
 * its `view` hook adds (CheckTypeHooks.view; heartbeats/check-type.ts; docs/heartbeats.md), and AGENTIC's
 * read-only `scriptVersion`.
 */
const VIEW_FIELDS: Partial<Record<CheckType, { properties: JsonSchema; required: string[] }>> = {
  // Kept in the document, read-only in bodies (types/agentic.ts): counted up by each script stored.
  AGENTIC: {
    properties: {
      scriptVersion: {
        type: 'integer',
        minimum: 0,
        description:
          "The stored script's version: 0 before a run wrote one, then one more with each script stored (a run's, an applied repair, a person's edit)",
      },
    },
    required: ['scriptVersion'],
  },
  HEARTBEAT: {
    properties: {
      pingUrl: {
        type: 'string',
        description: 'Where the job pings: GET or POST, no key (docs/heartbeats.md)',
      },
      heartbeatState: {
        type: 'object',
        additionalProperties: true,
        required: ['status', 'lastPingAt', 'startedAt', 'dueAt'],
        properties: {
          status: { type: 'string', enum: ['NEW', 'UP', 'STARTED', 'LATE', 'FAILING', 'PAUSED'] },
          lastPingAt: { type: ['string', 'null'], format: 'date-time' },
          startedAt: { type: ['string', 'null'], format: 'date-time' },
          dueAt: { type: ['string', 'null'], format: 'date-time' },
        },
      },
    },
    required: [],
  },
};

/**
 * The answer of one check type: the fields of its create body (answeredSchema; a field the update body lets
 * be null is nullable, as it may be stored so), then CheckSharedResponseSchema's (which win over the
 * body's), `checkType` fixed to the type, and the fields its `view` adds. Required: the shared required
 * fields and the create body's. Titled (checkSchemaTitle) for the OpenAPI document's components.
 * @param entry the type's registry entry (types/registry.ts).
 * @param update the properties of the body of `PUT /v1/checks/{id}` (types/update.ts, UpdateAnyCheckBody).
 */
export function checkTypeResponseSchema(
  entry: { checkType: CheckType; createBody: TSchema },
  update: Readonly<Record<string, unknown>>,
): JsonSchema {
  const shared = CheckSharedResponseSchema;
  const body = answeredSchema(entry.createBody);
  const bodyProperties = (body.properties ?? {}) as Record<string, JsonSchema>;
  for (const [name, property] of Object.entries(bodyProperties)) {
    const updated = update[name] as JsonSchema | undefined;
    if (updated && takesNull(updated) && !takesNull(property)) bodyProperties[name] = orNull(property);
  }
  const view = VIEW_FIELDS[entry.checkType];
  const sharedProperties = JSON.parse(JSON.stringify(shared.properties)) as Record<string, JsonSchema>;
  // The shared fields first (the serialiser writes them in this order, as before), then the type's own.
  const properties: Record<string, unknown> = {
    ...sharedProperties,
    checkType: { type: 'string', enum: [entry.checkType] },
    ...Object.fromEntries(Object.entries(bodyProperties).filter(([name]) => !(name in sharedProperties))),
    ...view?.properties,
  };
  const required = [
    ...new Set([
      ...(shared.required ?? []),
      ...((body.required as string[] | undefined) ?? []),
      ...(view?.required ?? []),
    ]),
  ];
  return {
    title: checkSchemaTitle(entry.checkType),
    description: `A check of type ${entry.checkType} as the API answers it. Open: a client ignores fields it does not know.`,
    type: 'object',
    required,
    properties,
    additionalProperties: true,
  };
}
