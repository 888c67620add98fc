import { type Static, type TOptional, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import {
  API_ASSERTION_SOURCES,
  ASSERTION_COMPARISONS,
  LOCATIONS,
  RUNTIME_IDS,
} from '../../../protocol/index.js';
import { ApiKeyValueSchema, BasicAuthSchema } from '../../checks/schemas.js';
import {
  AlertSettingsSchema,
  assertionPresentationFields,
  EnvironmentVariableSchema,
  RetryStrategySchema,
} from '../../checks/schemas.js';
import {
  echoedResourceFields,
  Nullable,
  StringEnum,
  strict,
  NullableTimestamp,
  Timestamp,
} from '../../platform/http/schema-helpers.js';

const KeyValueSchema = ApiKeyValueSchema;
type BasicAuth = Static<typeof BasicAuthSchema>;

/**
 * `apiCheckDefaults` (docs/api.md, "Check group"): `url` (a base URL, may be empty),
 * `headers` and `queryParameters` (items `key`, `value`), `assertions` (items
 * `source`, `comparison`, `target`; `property` and `regex` accepted as in every
 * assertion) and `basicAuth` (`username`, `password`, or null). Each part defaults
 * to empty (`''`, `[]`, null).
 */
const ApiCheckDefaultsSchema = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048, default: '' })),
    headers: Type.Optional(Type.Array(KeyValueSchema, { maxItems: 100, default: [] })),
    queryParameters: Type.Optional(Type.Array(KeyValueSchema, { maxItems: 100, default: [] })),
    assertions: Type.Optional(
      Type.Array(
        Type.Object(
          {
            source: StringEnum(API_ASSERTION_SOURCES),
            property: Type.Optional(Type.String({ maxLength: 1024 })),
            comparison: StringEnum(ASSERTION_COMPARISONS),
            target: Type.String({ maxLength: 4096 }),
            regex: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
            ...assertionPresentationFields,
          },
          strict,
        ),
        { maxItems: 100, default: [] },
      ),
    ),
    basicAuth: Type.Optional({ ...Nullable(BasicAuthSchema), default: null } as TUnsafe<BasicAuth | null>),
  },
  strict,
);

/**
 * A group's `retryStrategy`: the check retry-strategy object, or the literal
 * string `FALLBACK` (each grouped check's own strategy applies), or null (the same: what the hosted API's
 * clients send for a group without one). Written as if/then/else so a bad value gets one error from the
 * branch it meant.
 */
const GroupRetryStrategySchema = Type.Unsafe<Static<typeof RetryStrategySchema> | 'FALLBACK' | null>({
  if: { type: ['string', 'null'] },
  // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword; a non-function `then` is no thenable.
  then: { type: ['string', 'null'], enum: ['FALLBACK', null] },
  else: RetryStrategySchema,
});

const slug = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$' });

/** The writable fields of a check group with their rules and defaults (docs/api.md, "Check group"). */
const groupFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  activated: Type.Boolean(),
  concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 3 })),
  apiCheckDefaults: ApiCheckDefaultsSchema,
  muted: Type.Optional(Type.Boolean({ default: false })),
  tags: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 100, default: [] }),
  ),
  locations: Type.Optional(
    Type.Array(StringEnum(LOCATIONS), { maxItems: LOCATIONS.length, uniqueItems: true, default: [] }),
  ),
  browserCheckDefaults: Type.Optional(Nullable(Type.String({ maxLength: 131_072, default: null }))),
  environmentVariables: Type.Optional(
    Nullable(Type.Array(EnvironmentVariableSchema, { maxItems: 100, default: null })),
  ),
  doubleCheck: Type.Optional(Type.Boolean({ default: true })),
  useGlobalAlertSettings: Type.Optional(Nullable(Type.Boolean({ default: true }))),
  alertSettings: Type.Optional(AlertSettingsSchema),
  alertChannelSubscriptions: Type.Optional(
    Type.Array(
      Type.Object({ alertChannelId: Type.Integer({ minimum: 1 }), activated: Type.Boolean() }, strict),
      {
        maxItems: 100,
        default: [],
      },
    ),
  ),
  setupSnippetId: Type.Optional(Nullable(Type.Integer({ minimum: 1, default: null }))),
  tearDownSnippetId: Type.Optional(Nullable(Type.Integer({ minimum: 1, default: null }))),
  localSetupScript: Type.Optional(Nullable(Type.String({ maxLength: 131_072, default: null }))),
  localTearDownScript: Type.Optional(Nullable(Type.String({ maxLength: 131_072, default: null }))),
  runtimeId: Type.Optional(Nullable(StringEnum(RUNTIME_IDS, { default: null }))),
  privateLocations: Type.Optional(
    Nullable(Type.Array(slug, { maxItems: 100, uniqueItems: true, default: null })),
  ),
  retryStrategy: Type.Optional({
    ...GroupRetryStrategySchema,
    default: 'FALLBACK',
  } as typeof GroupRetryStrategySchema),
  runParallel: Type.Optional(Nullable(Type.Boolean({ default: false }))),
  // What the group's answer holds beside these, and the hosted API's clients send back (docs/api.md, "What
  // clients send back"): accepted and ignored.
  ...echoedResourceFields,
};

/**
 * Body of `POST /v1/check-groups`. `name`, `activated` and `apiCheckDefaults`
 * are required; `concurrency` is listed as required with a default of 3, and a
 * default only means something when the field may be left out, so it is optional.
 */
export const CreateCheckGroupBody = Type.Object(groupFields, strict);
/** A validated create body, schema defaults applied. */
export type CreateCheckGroup = Static<typeof CreateCheckGroupBody>;

/** Body of `PUT /v1/check-groups/{id}`: every field optional; given fields replace the stored ones, no defaults. */
export const UpdateCheckGroupBody = Type.Object(
  Object.fromEntries(Object.entries(groupFields).map(([k, s]) => [k, Type.Optional(withoutDefault(s))])) as {
    [K in keyof typeof groupFields]: TOptional<(typeof groupFields)[K]>;
  },
  strict,
);
/** A validated update body: only the fields the caller sent. */
export type UpdateCheckGroup = Static<typeof UpdateCheckGroupBody>;

/** Copy of a top-level schema without its `default`, so an update never resets an omitted field. */
function withoutDefault<T extends TSchema>(schema: T): T {
  const { default: _ignored, ...rest } = schema as T & { default?: unknown };
  return rest as T;
}

/** A check group as the API answers it: every field present, secret variable values masked. */
export const CheckGroupSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    activated: Type.Boolean(),
    concurrency: Type.Integer(),
    apiCheckDefaults: Type.Object({
      url: Type.String(),
      headers: Type.Array(KeyValueSchema),
      queryParameters: Type.Array(KeyValueSchema),
      assertions: Type.Array(
        Type.Object({
          source: Type.String(),
          property: Type.Optional(Type.String()),
          comparison: Type.String(),
          target: Type.String(),
          regex: Type.Optional(Nullable(Type.String())),
        }),
      ),
      basicAuth: Nullable(Type.Object({ username: Type.String(), password: Type.String() })),
    }),
    muted: Type.Boolean(),
    tags: Type.Array(Type.String()),
    locations: Type.Array(Type.String()),
    browserCheckDefaults: Nullable(Type.String()),
    environmentVariables: Nullable(Type.Array(EnvironmentVariableSchema)),
    doubleCheck: Type.Boolean(),
    useGlobalAlertSettings: Nullable(Type.Boolean()),
    alertSettings: AlertSettingsSchema,
    alertChannelSubscriptions: Type.Array(
      Type.Object({ alertChannelId: Type.Integer(), activated: Type.Boolean() }),
    ),
    setupSnippetId: Nullable(Type.Integer()),
    tearDownSnippetId: Nullable(Type.Integer()),
    localSetupScript: Nullable(Type.String()),
    localTearDownScript: Nullable(Type.String()),
    runtimeId: Nullable(Type.String()),
    privateLocations: Nullable(Type.Array(Type.String())),
    retryStrategy: Type.Union([StringEnum(['FALLBACK'] as const), RetryStrategySchema, Type.Null()]),
    runParallel: Nullable(Type.Boolean()),
    created_at: Timestamp,
    updated_at: NullableTimestamp,
  },
  strict,
);
/** A check group as answered. */
export type CheckGroup = Static<typeof CheckGroupSchema>;
