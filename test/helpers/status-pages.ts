/**
 * Seeds a large public status page for the browser tests and the benchmark (docs/status-pages.md): 5 cards ×
 * 10 services and 90 days of incidents (about one every 2 days on a random service, MAJOR, MINOR and
 * MAINTENANCE mixed, 10 min to 8 h long, 2 to 4 updates each, 2 still open), made through the `/v1` API:
 * past incidents through their `startedAt`/`stoppedAt` and each update's `publicIncidentUpdateDate`.
 * The one thing the API cannot express is a service that existed 90 days ago (a service's `created_at` is
 * the time of its POST, and a strip day before it has no data): {@link backdateServices} moves it back in
 * the store with kysely. Deterministic: the same seed gives the same names, impacts and times (relative to
 * `nowMs`). No vitest import: the benchmark uses it too.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../src/service/platform/store/database.js';

/** One `/v1` call as the seeding account: resolves with the status and the parsed JSON body (null if empty). */
export type ApiCall = (
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
) => Promise<{ status: number; json: any }>;

/** Impacts of an incident (docs/api.md, "Incident"). */
export type SeedImpact = 'MAJOR' | 'MINOR' | 'MAINTENANCE';

/** An incident the seed made, as the page should show it. Times in epoch ms. */
export type SeededIncident = {
  id: string;
  name: string;
  impact: SeedImpact;
  startedAtMs: number;
  /** Null while open. */
  stoppedAtMs: number | null;
  serviceIds: string[];
  /** The updates' statuses and descriptions, oldest first. */
  updates: { status: string; description: string; atMs: number }[];
};

/** A seeded service. */
export type SeededService = { id: string; name: string; card: string };

/** What {@link seedStatusPage} made. */
export type SeededStatusPage = {
  pageId: string;
  /** The page's `url` (`/status/{url}`). */
  url: string;
  name: string;
  description: string;
  cards: { name: string; services: SeededService[] }[];
  /** Every service, card by card. */
  services: SeededService[];
  /** Oldest first. */
  incidents: SeededIncident[];
  /** The clear access keys of a private page (shown once by the API); empty for a public page. */
  keys: { id: string; key: string }[];
  /** The `nowMs` the times were computed from. */
  nowMs: number;
};

/** Options of {@link seedStatusPage}. */
export type StatusPageSeedOptions = {
  /** Page name (default "Acme Cloud Status") and `url` (default `acme-cloud`). */
  name?: string;
  url?: string;
  /** Cards (default 5) and services per card (default 10). */
  cards?: number;
  servicesPerCard?: number;
  /** Days of incident history (default 90). */
  days?: number;
  /** Mean days between two incidents (default 2). */
  meanGapDays?: number;
  /** Seed of the pseudo-random sequence (default 14). */
  seed?: number;
  /** The "now" incidents are placed before (default Date.now()). */
  nowMs?: number;
  /** Further fields of the page body: `defaultTheme`, `logo`, `favicon`, `isPrivate`, `redirectTo`, … */
  page?: Record<string, unknown>;
  /**
   * The store, to move the services' `created_at` 91 days back ({@link backdateServices}); without it the
   * services start now and every strip day but today has no data.
   */
  db?: Kysely<Database>;
  /** Services are created this many at a time (default 8). */
  concurrency?: number;
};

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** A deterministic pseudo-random sequence in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const CARD_NAMES = ['Core platform', 'Data & storage', 'Integrations', 'Regions', 'Billing & accounts'];
const SERVICE_NAMES: string[][] = [
  [
    'API',
    'Dashboard',
    'Authentication',
    'Web app',
    'Mobile API',
    'Search',
    'Notifications',
    'Webhooks',
    'CLI',
    'Admin console',
  ],
  [
    'Primary database',
    'Read replicas',
    'Object storage',
    'Backups',
    'Cache',
    'Message queue',
    'Analytics warehouse',
    'Log ingestion',
    'Metrics store',
    'File uploads',
  ],
  [
    'Slack',
    'GitHub',
    'PagerDuty',
    'Jira',
    'Microsoft Teams',
    'Opsgenie',
    'Zapier',
    'Salesforce',
    'SAML single sign-on',
    'SCIM provisioning',
  ],
  [
    'Frankfurt (eu-central-1)',
    'Ireland (eu-west-1)',
    'N. Virginia (us-east-1)',
    'Oregon (us-west-2)',
    'São Paulo (sa-east-1)',
    'Tokyo (ap-northeast-1)',
    'Singapore (ap-southeast-1)',
    'Sydney (ap-southeast-2)',
    'Mumbai (ap-south-1)',
    'Montréal (ca-central-1)',
  ],
  [
    'Checkout',
    'Invoices & receipts',
    'Payment methods',
    'Subscriptions',
    'Usage metering',
    'Tax calculation',
    'Refunds',
    'Customer portal',
    'Sign-up',
    'Account settings',
  ],
];

const NAMES_BY_IMPACT: Record<SeedImpact, string[]> = {
  MAJOR: ['{s} unavailable', 'Outage of {s}', 'Errors on every request to {s}', '{s} not responding'],
  MINOR: [
    'Elevated error rates on {s}',
    'Degraded performance of {s}',
    'Slow responses from {s}',
    'Delays in {s}',
  ],
  MAINTENANCE: ['Scheduled maintenance of {s}', 'Planned upgrade of {s}', '{s}: database migration'],
};

const UPDATE_TEXTS: Record<string, string[]> = {
  INVESTIGATING: [
    'We are investigating reports of errors affecting {s}.',
    'Some customers see failed requests to {s}. We are looking into it.',
  ],
  IDENTIFIED: [
    'The cause has been identified: a faulty configuration change. A fix is being rolled out.',
    'We found an overloaded node behind {s} and are moving traffic away from it.',
  ],
  MONITORING: [
    'A fix has been deployed. We are monitoring {s} closely.',
    'Error rates are back to normal; we keep watching {s}.',
  ],
  RESOLVED: [
    'This incident has been resolved.',
    '{s} is working normally again. We apologise for the trouble.',
  ],
  MAINTENANCE: [
    'Maintenance of {s} is in progress; short interruptions are expected.',
    'The maintenance window for {s} has started.',
  ],
};

/** Picks one of `items` with `random`. */
function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

/** The statuses of an incident's updates, oldest first: `count` of them (2 to 4), ending resolved or not. */
function statusesFor(impact: SeedImpact, count: number, open: boolean): string[] {
  const flow =
    impact === 'MAINTENANCE' ? ['MAINTENANCE', 'MONITORING'] : ['INVESTIGATING', 'IDENTIFIED', 'MONITORING'];
  const statuses: string[] = [];
  for (let i = 0; i < count - (open ? 0 : 1); i++)
    statuses.push(flow[Math.min(i, flow.length - 1)] as string);
  if (!open) statuses.push('RESOLVED');
  return statuses;
}

/**
 * Creates the services, the page and its incidents through `api` (see the file comment).
 * @throws Error naming the call when the API answers anything but 201.
 */
export async function seedStatusPage(
  api: ApiCall,
  options: StatusPageSeedOptions = {},
): Promise<SeededStatusPage> {
  const nowMs = options.nowMs ?? Date.now();
  const random = seededRandom(options.seed ?? 14);
  const cardCount = options.cards ?? 5;
  const perCard = options.servicesPerCard ?? 10;
  const days = options.days ?? 90;
  const meanGapDays = options.meanGapDays ?? 2;
  const name = options.name ?? 'Acme Cloud Status';
  const url = options.url ?? 'acme-cloud';
  const description = 'Live and past availability of Acme Cloud’s services.';

  const created = async (what: string, method: 'POST', path: string, body: unknown) => {
    const res = await api(method, path, body);
    if (res.status !== 201) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json;
  };

  // Services, card by card (names are unique: a card's name is part of a name used twice).
  const cards: SeededStatusPage['cards'] = [];
  const wanted: { card: string; name: string; cardIndex: number; index: number }[] = [];
  for (let c = 0; c < cardCount; c++) {
    const cardName = CARD_NAMES[c % CARD_NAMES.length] + (c >= CARD_NAMES.length ? ` ${c + 1}` : '');
    cards.push({ name: cardName, services: [] });
    const names = SERVICE_NAMES[c % SERVICE_NAMES.length] as string[];
    for (let s = 0; s < perCard; s++) {
      const base = names[s % names.length] as string;
      const serviceName = c >= CARD_NAMES.length || s >= names.length ? `${base} ${c + 1}.${s + 1}` : base;
      wanted.push({ card: cardName, name: serviceName, cardIndex: c, index: s });
    }
  }
  const made: SeededService[] = new Array(wanted.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: options.concurrency ?? 8 }, async () => {
      while (next < wanted.length) {
        const i = next++;
        const w = wanted[i]!;
        const json = await created('service', 'POST', '/v1/status-pages/services', { name: w.name });
        made[i] = { id: String(json.id), name: w.name, card: w.card };
      }
    }),
  );
  for (const [i, w] of wanted.entries()) cards[w.cardIndex]!.services.push(made[i]!);
  const services = cards.flatMap((c) => c.services);
  if (options.db)
    await backdateServices(
      options.db,
      services.map((s) => s.id),
      nowMs - (days + 1) * DAY_MS,
    );

  const page = await created('status page', 'POST', '/v1/status-pages', {
    name,
    url,
    description,
    cards: cards.map((c) => ({ name: c.name, services: c.services.map((s) => ({ id: s.id })) })),
    ...options.page,
  });
  const keys = ((page.keys ?? []) as { id: string; key?: string }[])
    .filter((k) => typeof k.key === 'string')
    .map((k) => ({ id: k.id, key: k.key as string }));

  // Resolved incidents: one every `meanGapDays` on average (gaps 0.5 to 1.5 × the mean), the last one
  // ending at least an hour before now.
  const plans: Omit<SeededIncident, 'id'>[] = [];
  let t = nowMs - days * DAY_MS + random() * DAY_MS;
  while (true) {
    const roll = random();
    const impact: SeedImpact = roll < 0.3 ? 'MAJOR' : roll < 0.75 ? 'MINOR' : 'MAINTENANCE';
    const durationMs = Math.round((10 + random() * (8 * 60 - 10)) * MINUTE_MS);
    const startedAtMs = Math.floor(t / MINUTE_MS) * MINUTE_MS;
    const stoppedAtMs = startedAtMs + durationMs;
    if (stoppedAtMs > nowMs - 6 * 3_600_000) break;
    const first = pick(random, services);
    const serviceIds = [first.id];
    if (random() < 0.2) {
      const second = pick(random, services);
      if (second.id !== first.id) serviceIds.push(second.id);
    }
    plans.push(plan(random, impact, startedAtMs, stoppedAtMs, serviceIds, services, false));
    t += (0.5 + random()) * meanGapDays * DAY_MS;
  }
  // Two open incidents on services of different cards: a MAJOR one started 40 minutes ago and a MINOR one
  // started 3 hours ago.
  const openMajor = cards[0]!.services[Math.min(1, perCard - 1)]!;
  const openMinor = cards[Math.min(3, cardCount - 1)]!.services[Math.min(4, perCard - 1)]!;
  plans.push(plan(random, 'MINOR', nowMs - 180 * MINUTE_MS, null, [openMinor.id], services, true));
  plans.push(plan(random, 'MAJOR', nowMs - 40 * MINUTE_MS, null, [openMajor.id], services, true));

  const incidents: SeededIncident[] = [];
  for (const p of plans) {
    const json = await created('incident', 'POST', '/v1/incidents', {
      name: p.name,
      impact: p.impact,
      startedAt: new Date(p.startedAtMs).toISOString(),
      stoppedAt: p.stoppedAtMs === null ? null : new Date(p.stoppedAtMs).toISOString(),
      services: p.serviceIds.map((id) => ({ id })),
      incidentUpdates: p.updates.map((u) => ({
        status: u.status,
        description: u.description,
        notifySubscribers: false,
        publicIncidentUpdateDate: new Date(u.atMs).toISOString(),
      })),
    });
    incidents.push({ ...p, id: String(json.id) });
  }
  return { pageId: String(page.id), url, name, description, cards, services, incidents, keys, nowMs };
}

/** One incident's name and updates (statuses in order, times spread over its span). */
function plan(
  random: () => number,
  impact: SeedImpact,
  startedAtMs: number,
  stoppedAtMs: number | null,
  serviceIds: string[],
  services: SeededService[],
  open: boolean,
): Omit<SeededIncident, 'id'> {
  const serviceName = services.find((s) => s.id === serviceIds[0])?.name ?? 'the service';
  const fill = (text: string) => text.replaceAll('{s}', serviceName);
  const count = 2 + Math.floor(random() * 3);
  const statuses = statusesFor(impact, count, open);
  const endMs = stoppedAtMs ?? startedAtMs + (statuses.length - 1) * 5 * MINUTE_MS;
  const updates = statuses.map((status, i) => ({
    status,
    description: fill(pick(random, UPDATE_TEXTS[status] as string[])),
    atMs:
      i === 0
        ? startedAtMs
        : i === statuses.length - 1 && !open
          ? endMs
          : Math.round(startedAtMs + ((endMs - startedAtMs) * i) / Math.max(1, statuses.length - 1)),
  }));
  return {
    name: fill(pick(random, NAMES_BY_IMPACT[impact])),
    impact,
    startedAtMs,
    stoppedAtMs,
    serviceIds,
    updates,
  };
}

/**
 * Moves the `created_at` of status-page services back to `createdAtMs` in the store (kysely, portable): the
 * API sets it to the time of the POST and has no field for it, and a strip day before a service existed
 * shows no data.
 */
export async function backdateServices(
  db: Kysely<Database>,
  serviceIds: string[],
  createdAtMs: number,
): Promise<void> {
  if (serviceIds.length === 0) return;
  await db
    .updateTable('status_page_services')
    .set({ created_at: createdAtMs })
    .where('id', 'in', serviceIds)
    .execute();
}

/**
 * Adds `count` confirmed whole-page subscribers to a page directly in the store (`status_page_subscribers`,
 * `confirmed_at` set: the double opt-in is skipped), addresses `subscriber-{n}@{domain}`.
 * @returns their addresses, in order.
 */
export async function insertConfirmedSubscribers(
  db: Kysely<Database>,
  page: { pageId: string; accountId: string },
  count: number,
  domain = 'subscribers.example.test',
  nowMs = Date.now(),
): Promise<string[]> {
  const emails = Array.from({ length: count }, (_, n) => `subscriber-${n + 1}@${domain}`);
  const { randomUUID } = await import('node:crypto');
  for (let i = 0; i < emails.length; i += 200) {
    await db
      .insertInto('status_page_subscribers')
      .values(
        emails.slice(i, i + 200).map((email) => ({
          id: randomUUID(),
          account_id: page.accountId,
          status_page_id: page.pageId,
          email,
          service_ids: null,
          created_at: nowMs,
          confirmed_at: nowMs,
          confirmation_sent_at: nowMs,
        })),
      )
      .execute();
  }
  return emails;
}

/**
 * What the strip should say for one service and one UTC day (`YYYY-MM-DD`), from the seeded incidents and
 * UPTIME_RULE: incidents open at some time of the day, and the uptime percent (down time = the union of
 * MAJOR time + 0.3 × MINOR time not under MAJOR, over the day without maintenance time); null uptime when
 * the day is only maintenance. `exact` is false when maintenance overlaps another incident that day (the
 * rule leaves the order of the cut-outs open) or the day is today (a day not over).
 */
export function expectedDay(
  seeded: SeededStatusPage,
  serviceId: string,
  date: string,
): { incidentCount: number; uptimePercent: number | null; exact: boolean } {
  const dayStart = Date.parse(`${date}T00:00:00Z`);
  const dayEnd = dayStart + DAY_MS;
  const clip = (i: SeededIncident): [number, number] | null => {
    const from = Math.max(i.startedAtMs, dayStart);
    const to = Math.min(i.stoppedAtMs ?? seeded.nowMs, dayEnd);
    return to > from || (to === from && i.startedAtMs >= dayStart && i.startedAtMs < dayEnd)
      ? [from, to]
      : null;
  };
  const open = seeded.incidents
    .filter((i) => i.serviceIds.includes(serviceId))
    .map((i) => ({ impact: i.impact, span: clip(i) }))
    .filter((x): x is { impact: SeedImpact; span: [number, number] } => x.span !== null);
  const union = (spans: [number, number][]): [number, number][] => {
    const sorted = [...spans].sort((a, b) => a[0] - b[0]);
    const out: [number, number][] = [];
    for (const s of sorted) {
      const last = out[out.length - 1];
      if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
      else out.push([s[0], s[1]]);
    }
    return out;
  };
  const length = (spans: [number, number][]) => spans.reduce((sum, s) => sum + (s[1] - s[0]), 0);
  const of = (impact: SeedImpact) => union(open.filter((x) => x.impact === impact).map((x) => x.span));
  const major = of('MAJOR');
  const minor = of('MINOR');
  const maintenance = of('MAINTENANCE');
  const overlap = (a: [number, number][], b: [number, number][]) => {
    let sum = 0;
    for (const x of a) for (const y of b) sum += Math.max(0, Math.min(x[1], y[1]) - Math.max(x[0], y[0]));
    return sum;
  };
  const minorOnly = length(minor) - overlap(minor, major);
  const denominator = DAY_MS - length(maintenance);
  const exact =
    dayEnd <= seeded.nowMs && (maintenance.length === 0 || (major.length === 0 && minor.length === 0));
  const uptimePercent = denominator <= 0 ? null : 100 * (1 - (length(major) + 0.3 * minorOnly) / denominator);
  return { incidentCount: open.length, uptimePercent, exact };
}
