import { type Static, Type } from '@sinclair/typebox';
import { CursorQuery } from '../../platform/http/pagination.js';
import {
  type EchoedField,
  echoedResourceFields,
  echoedTimestampFields,
  Ignored,
  Nullable,
  StringEnum,
  strict,
  NullableTimestamp,
  Timestamp,
  ResourceId,
  Defaulted,
} from '../../platform/http/schema-helpers.js';
import { ServiceSchema, StatusPageIncidentSchema } from '../incidents/schema.js';

/** Themes a visitor sees first (docs/api.md, "Status page": LIGHT, DARK, AUTO; default AUTO). */
const DEFAULT_THEMES = ['LIGHT', 'DARK', 'AUTO'] as const;

/** The 12 colour fields of each theme (docs/api.md, "Status page", `themeColors`). */
export const THEME_COLOR_FIELDS = [
  'bodyBackgroundColor',
  'headerBackgroundColor',
  'headerFontColor',
  'titleFontColor',
  'bodyFontColor',
  'bodyFontColorMuted',
  'navigationFontColor',
  'linkFontColor',
  'cardBackgroundColor',
  'borderColor',
  'primaryButtonBackgroundColor',
  'primaryButtonFontColor',
] as const;

/**
 * A colour value. The spec does not show the format; we accept CSS hex
 * colours `#rgb`, `#rrggbb` and `#rrggbbaa` (what the market leader's UI writes).
 */
const ColorSchema = Type.String({
  pattern: '^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$',
  description: 'CSS hex colour: #rgb, #rrggbb or #rrggbbaa',
});

/** One theme: all 12 colour fields, each required. */
const ThemeSchema = Type.Object(
  Object.fromEntries(THEME_COLOR_FIELDS.map((f) => [f, ColorSchema])) as Record<
    (typeof THEME_COLOR_FIELDS)[number],
    typeof ColorSchema
  >,
  strict,
);

/** `themeColors`: a `light` and a `dark` theme. */
const ThemeColorsSchema = Type.Object({ light: ThemeSchema, dark: ThemeSchema }, strict);
/** A page's `themeColors` as the API takes and answers them. */
export type ThemeColors = Static<typeof ThemeColorsSchema>;

/**
 * Page url: the page's subdomain, a DNS label (RFC 1035 §2.3.1, lower case):
 * 1–63 of a–z, 0–9 and `-`, not starting or ending with `-`. Unique across the service: the page is
 * public at `/status/{url}`.
 */
const SlugSchema = Type.String({
  minLength: 1,
  maxLength: 63,
  pattern: '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$',
  description: 'subdomain of the page: lower-case letters, digits and hyphens',
});

/**
 * A host name of at least two labels (RFC 1123), for `customDomain`, without
 * scheme, port or path: `status.example.com`.
 */
const HOST_NAME_OPTIONS = {
  maxLength: 253,
  pattern:
    '^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$',
  description: 'host name such as status.example.com',
} as const;

/** An absolute http(s) URL (logo, redirectTo, favicon), at most 2048 characters. */
const HTTP_URL_OPTIONS = { maxLength: 2048, format: 'uri', pattern: '^https?://' } as const;

const ServiceRef = Type.Object(
  {
    id: ResourceId,
    name: Ignored(Type.String({ maxLength: 255 }), "the service's name: the service is named by `id`"),
  },
  strict,
);

/**
 * A card in a request: `name`, `services` (ids of the account's status-page
 * services; optional, none when left out: a card may start empty); `id` keeps an
 * existing card of the page (otherwise a new card is made); `statusPageId`, when
 * given on update, must be the page's id.
 */
const CardBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    id: Type.Optional(ResourceId),
    statusPageId: Type.Optional(ResourceId),
    services: Type.Optional(Type.Array(ServiceRef, { maxItems: 100 })),
    ...echoedTimestampFields,
  },
  strict,
);
/** A card as the API takes it (services by id; `id` to keep an existing card). */
export type CardBody = Omit<Static<typeof CardBodySchema>, Exclude<EchoedField, 'id'>>;

/**
 * Body of POST (with defaults) and PUT (without: omitted optional fields keep
 * their stored values) `/v1/status-pages`; `name`, `url` and `cards` required.
 */
export function statusPageBody(withDefaults: boolean) {
  const d = <T>(value: T) => (withDefaults ? { default: value } : {});
  return Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 255 }),
      url: SlugSchema,
      cards: Type.Array(CardBodySchema, { maxItems: 50 }),
      description: Type.Optional(Nullable(Type.String({ maxLength: 500, ...d(null) }))),
      customDomain: Type.Optional(Nullable(Type.String({ ...HOST_NAME_OPTIONS, ...d(null) }))),
      themeColors: Type.Optional(ThemeColorsSchema),
      logo: Type.Optional(Nullable(Type.String({ ...HTTP_URL_OPTIONS, ...d(null) }))),
      // Kept and answered, as the hosted API does; the public page shows `logo` in both themes.
      logoDark: Type.Optional(Nullable(Type.String({ ...HTTP_URL_OPTIONS, ...d(null) }))),
      redirectTo: Type.Optional(Nullable(Type.String({ ...HTTP_URL_OPTIONS, ...d(null) }))),
      favicon: Type.Optional(Nullable(Type.String({ ...HTTP_URL_OPTIONS, ...d(null) }))),
      defaultTheme: Type.Optional(StringEnum(DEFAULT_THEMES, d('AUTO'))),
      isPrivate: Type.Optional(Type.Boolean(d(false))),
      ...echoedResourceFields,
    },
    strict,
  );
}
/** The body of a status page's create or update (see {@link statusPageBody}). */
export type StatusPageBody = Omit<Static<ReturnType<typeof statusPageBody>>, EchoedField>;

/** Body of POST and PUT `/v1/status-pages/services`. */
export const ServiceBodySchema = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 255 }), ...echoedResourceFields },
  strict,
);

/**
 * A check linked to a status-page service: one whose `triggerIncident.serviceId` names it (docs/api.md,
 * "Incident trigger"). An Outpost extension of the service's answers.
 */
const LinkedCheckSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  severity: StringEnum(['MINOR', 'MEDIUM', 'MAJOR', 'CRITICAL'] as const),
});

/**
 * A status-page service as `GET /v1/status-pages/services` and `GET /v1/status-pages/services/{id}` answer
 * it: the service and its linked `checks` (by name; none when no check names it). Link or unlink a check
 * with its own `triggerIncident` (`PUT /v1/checks/{id}`).
 */
export const ServiceWithChecksSchema = Type.Object({
  ...ServiceSchema.properties,
  checks: Type.Array(LinkedCheckSchema),
});
/** A status-page service with its linked checks, as the API answers it. */
export type ServiceWithChecks = Static<typeof ServiceWithChecksSchema>;

/** Query of `GET /v1/status-pages/services`: `paginated` false answers all services at once. */
export const ServiceListQuery = Type.Object(
  { ...CursorQuery.properties, paginated: Defaulted(Type.Boolean({ default: true })) },
  strict,
);

/** A card as the API shows it. */
const CardSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Timestamp,
  updated_at: NullableTimestamp,
  services: Type.Array(ServiceSchema),
});

/**
 * An access key of a private page: only its mask is shown; `key` (the key in
 * clear) appears once, in the response of the request that made it.
 */
export const StatusPageKeySchema = Type.Object({
  id: Type.String(),
  maskedKey: Type.String(),
  key: Type.Optional(Type.String()),
  created_at: Timestamp,
  updated_at: NullableTimestamp,
});

/**
 * The TXT record that proves control of a page's custom domain (docs/status-pages.md, "Custom domains"):
 * `_outpost-challenge.{customDomain}` with the text `outpost-verify={token}`.
 */
const DomainVerificationSchema = Type.Object({
  type: Type.Literal('TXT'),
  name: Type.String(),
  value: Type.String(),
});

/**
 * A status page as every status-page operation answers it (create, list entries, get, update, verify the
 * custom domain). The `customDomain…` fields are null for a page without a custom domain.
 */
export const StatusPageSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  description: Nullable(Type.String()),
  customDomain: Nullable(Type.String()),
  themeColors: ThemeColorsSchema,
  logo: Nullable(Type.String()),
  logoDark: Type.Optional(Nullable(Type.String())),
  redirectTo: Nullable(Type.String()),
  favicon: Nullable(Type.String()),
  defaultTheme: StringEnum(DEFAULT_THEMES),
  isPrivate: Type.Boolean(),
  whiteLabel: Type.Boolean(),
  accountId: Type.String(),
  created_at: Timestamp,
  updated_at: NullableTimestamp,
  cards: Type.Array(CardSchema),
  incidents: Type.Array(StatusPageIncidentSchema),
  keys: Type.Array(StatusPageKeySchema),
  customDomainStatus: Nullable(StringEnum(['PENDING', 'VERIFIED'] as const)),
  customDomainVerification: Nullable(DomainVerificationSchema),
  customDomainVerifiedAt: NullableTimestamp,
  customDomainVerifiedBy: Nullable(StringEnum(['TXT', 'ALLOW_LIST'] as const)),
  customDomainCheckedAt: NullableTimestamp,
  customDomainProblem: Nullable(Type.String()),
});
