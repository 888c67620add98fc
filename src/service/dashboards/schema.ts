import { type Static, Type } from '@sinclair/typebox';
import {
  echoedResourceFields,
  Ignored,
  Nullable,
  NullableTimestamp,
  StringEnum,
  strict,
  Timestamp,
} from '../platform/http/schema-helpers.js';

/** The widths a dashboard is laid out in: the whole window, or a centred column of 960 px. */
export const DASHBOARD_WIDTHS = ['FULL', '960PX'] as const;

/** Longest wait of `refreshRate` and `paginationRate`, seconds (one hour). */
export const MAX_RATE_SECONDS = 3600;

/**
 * A `customUrl`: a DNS label (1–63 letters, digits and inner hyphens), the hosted API's subdomain; looked up
 * without regard to case. The empty string is none.
 */
const CustomUrl = Nullable(
  Type.String({ maxLength: 63, pattern: '^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)?$' }),
);

/** A `customDomain`: a host name with at least two labels, or the empty string (none). */
const CustomDomain = Nullable(
  Type.String({
    maxLength: 253,
    pattern: '^(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63})?$',
  }),
);

/** A link or image address on the public page: an `http(s)` URL without spaces or quotes, or the empty string. */
const PageUrl = Nullable(Type.String({ maxLength: 2048, pattern: '^(?:https?://[^\\s"<>]+)?$' }));

/**
 * The fields of a dashboard a client writes (docs/api.md, "Dashboards"), each with the hosted API's default.
 * `tags` select the checks shown (all of the account's when empty): checks with any of them, or with all of
 * them when `useTagsAndOperator`. Rates are seconds; 0 turns the automatic refresh or page turn off.
 */
const dashboardFields = {
  customUrl: Type.Optional(CustomUrl),
  customDomain: Type.Optional(CustomDomain),
  logo: Type.Optional(PageUrl),
  favicon: Type.Optional(PageUrl),
  link: Type.Optional(PageUrl),
  header: Type.String({ maxLength: 255 }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  width: Type.Optional(StringEnum(DASHBOARD_WIDTHS)),
  refreshRate: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_RATE_SECONDS })),
  paginate: Type.Optional(Type.Boolean()),
  paginationRate: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_RATE_SECONDS })),
  sortByStatus: Type.Optional(Type.Boolean()),
  checksPerPage: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 20 }))),
  useTagsAndOperator: Type.Optional(Nullable(Type.Boolean())),
  hideTags: Type.Optional(Type.Boolean()),
  enableIncidents: Type.Optional(Type.Boolean()),
  expandChecks: Type.Optional(Type.Boolean()),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 100 })),
  showHeader: Type.Optional(Type.Boolean()),
  showCheckRunLinks: Type.Optional(Type.Boolean()),
  showGroupNames: Type.Optional(Type.Boolean()),
  customCSS: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  isPrivate: Type.Optional(Type.Boolean()),
  showP95: Type.Optional(Type.Boolean()),
  showP99: Type.Optional(Type.Boolean()),
};

/** What clients send back of an answered dashboard besides its fields: its ids, keys and timestamps. */
const echoedDashboardFields = {
  ...echoedResourceFields,
  dashboardId: Ignored(Type.String({ maxLength: 64 }), "the dashboard's id is the service's"),
  keys: Ignored(
    Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 100 }),
    'keys of private dashboards: a private dashboard is not served at all',
  ),
};

/** Body of `POST /v1/dashboards`: `header` required; every other field has the hosted API's default. */
export const CreateDashboardBody = Type.Object({ ...dashboardFields, ...echoedDashboardFields }, strict);
/** A `POST /v1/dashboards` body. */
export type CreateDashboard = Static<typeof CreateDashboardBody>;

/** Body of `PUT /v1/dashboards/{dashboardId}`: any of the fields; those left out keep their value. */
export const UpdateDashboardBody = Type.Object(
  { ...dashboardFields, header: Type.Optional(dashboardFields.header), ...echoedDashboardFields },
  strict,
);
/** A `PUT /v1/dashboards/{dashboardId}` body. */
export type UpdateDashboard = Static<typeof UpdateDashboardBody>;

/** A dashboard as the API answers it: every field, `id` (a number), `dashboardId` (a string), `keys` empty. */
export const DashboardSchema = Type.Object({
  id: Type.Integer(),
  dashboardId: Type.String(),
  customUrl: Type.Union([Type.String(), Type.Null()]),
  customDomain: Type.Union([Type.String(), Type.Null()]),
  logo: Type.Union([Type.String(), Type.Null()]),
  favicon: Type.Union([Type.String(), Type.Null()]),
  link: Type.Union([Type.String(), Type.Null()]),
  header: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  width: StringEnum(DASHBOARD_WIDTHS),
  refreshRate: Type.Integer(),
  paginate: Type.Boolean(),
  paginationRate: Type.Integer(),
  sortByStatus: Type.Boolean(),
  checksPerPage: Type.Integer(),
  useTagsAndOperator: Type.Boolean(),
  hideTags: Type.Boolean(),
  enableIncidents: Type.Boolean(),
  expandChecks: Type.Boolean(),
  tags: Type.Array(Type.String()),
  showHeader: Type.Boolean(),
  showCheckRunLinks: Type.Boolean(),
  showGroupNames: Type.Boolean(),
  customCSS: Type.String(),
  isPrivate: Type.Boolean(),
  showP95: Type.Boolean(),
  showP99: Type.Boolean(),
  keys: Type.Array(Type.Object({})),
  created_at: Timestamp,
  updated_at: NullableTimestamp,
});
/** A dashboard as answered. */
export type Dashboard = Static<typeof DashboardSchema>;

/** Path parameter `dashboardId`. */
export const DashboardIdParams = Type.Object(
  { dashboardId: Type.String({ minLength: 1, maxLength: 64 }) },
  strict,
);
