import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';

/**
 * The outbound address policy (docs/alerting.md, "Where alerts may go"): which addresses the service may
 * connect to for a URL a user gave (a webhook, a Slack incoming webhook), so an alert channel cannot be made
 * to read the service's own machine, its cloud metadata or its own API. Addresses are classified with
 * ipaddr.js; every address a name resolves to is checked, and the connection is then made to the checked
 * address only (pinnedConnector), so a name that resolves differently between check and connect (DNS
 * rebinding) gains nothing.
 */

/** The kinds of address the policy tells apart. */
export type AddressKind =
  | 'public'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'metadata';

/** What an address is: its kind and, for an IPv6 form that carries an IPv4 address, that address. */
export type AddressClass = {
  kind: AddressKind;
  /** The IPv4 address inside an IPv4-mapped, -compatible, NAT64 or 6to4 IPv6 address; its kind is `kind`. */
  ipv4?: string;
};

/** Kinds refused unless the allow-list names the address. */
const REFUSED_KINDS = new Set<AddressKind>([
  'loopback',
  'link-local',
  'unspecified',
  'multicast',
  'broadcast',
  'reserved',
  'metadata',
]);

/**
 * Cloud metadata services outside link-local space, refused like it: AWS's IPv6 endpoint (in the
 * unique-local range private networks use) and Alibaba Cloud's (in the shared address space,
 * 100.64.0.0/10). The link-local ones (169.254.169.254 of AWS, GCP, Azure; fe80::a9fe:a9fe) are
 * refused as link-local; Oracle's 192.0.0.192 as reserved.
 */
const METADATA = ['fd00:ec2::254', '100.100.100.200'].map((a) => ipaddr.parse(a).toNormalizedString());

/** ipaddr.js range names of IPv4 → kinds; a name not listed is `reserved` (special-purpose). */
const IPV4_KINDS: Record<string, AddressKind> = {
  unicast: 'public',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'private',
  private: 'private',
};

/** ipaddr.js range names of IPv6 → kinds; a name not listed (and not an IPv4 carrier) is `reserved`. */
const IPV6_KINDS: Record<string, AddressKind> = {
  unicast: 'public',
  teredo: 'public',
  unspecified: 'unspecified',
  linkLocal: 'link-local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'private',
  deprecatedSiteLocal: 'private',
};

/** `::/96`: an IPv4-compatible IPv6 address (`::127.0.0.1`) once `::` and `::1` are set apart. */
const IPV4_COMPATIBLE: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('::'), 96];
/** `64:ff9b::/96`, the well-known NAT64 prefix: the last 32 bits are the IPv4 address. */
const NAT64_WELL_KNOWN: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('64:ff9b::'), 96];

function ipv4Of(bytes: number[]): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytes);
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, SIIT, NAT64, 6to4), or null. */
function embeddedIpv4(v6: ipaddr.IPv6, range: string): ipaddr.IPv4 | null {
  const bytes = v6.toByteArray();
  if (range === 'ipv4Mapped' || range === 'rfc6145') return ipv4Of(bytes.slice(12, 16));
  if (range === 'rfc6052' && v6.match(NAT64_WELL_KNOWN)) return ipv4Of(bytes.slice(12, 16));
  if (range === '6to4') return ipv4Of(bytes.slice(2, 6));
  if (range === 'unicast' && v6.match(IPV4_COMPATIBLE)) return ipv4Of(bytes.slice(12, 16));
  return null;
}

/**
 * Classifies an IP address (IPv4 dotted quad or IPv6, a zone id allowed): loopback (127.0.0.0/8, ::1),
 * link-local (169.254.0.0/16, fe80::/10: cloud metadata), unspecified (0.0.0.0/8, ::), multicast,
 * broadcast, private (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, fec0::/10), reserved (every other
 * special-purpose range: documentation, benchmarking, 240/4, …) or public. An IPv6 address carrying an
 * IPv4 address (::ffff:127.0.0.1, ::127.0.0.1, ::ffff:0:127.0.0.1, 64:ff9b::127.0.0.1, 2002:7f00:1::) has
 * the kind of that IPv4 address, named in `ipv4`; the local-use NAT64 prefix 64:ff9b:1::/48 is private.
 * @throws TypeError when `address` is not an IP address (net.isIP).
 */
export function classifyAddress(address: string): AddressClass {
  if (isIP(address) === 0)
    throw new TypeError(`${JSON.stringify(address.slice(0, 100))} is not an IP address`);
  const parsed = ipaddr.parse(address);
  if (METADATA.includes(parsed.toNormalizedString())) return { kind: 'metadata' };
  if (parsed.kind() === 'ipv4') {
    return { kind: IPV4_KINDS[(parsed as ipaddr.IPv4).range()] ?? 'reserved' };
  }
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  const v4 = embeddedIpv4(v6, range);
  if (v4 !== null) {
    const kind = METADATA.includes(v4.toNormalizedString())
      ? 'metadata'
      : (IPV4_KINDS[v4.range()] ?? 'reserved');
    return { kind, ipv4: v4.toString() };
  }
  if (range === 'rfc6052') return { kind: 'private' };
  return { kind: IPV6_KINDS[range] ?? 'reserved' };
}

/** The words of a kind after "is" / "resolves to". */
const KIND_WORDS: Record<AddressKind, string> = {
  public: 'a public address',
  private: 'a private address',
  loopback: 'a loopback address',
  'link-local': 'a link-local address (where cloud metadata services answer)',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved (special-purpose) address',
  metadata: 'a cloud metadata service address',
};

/** One DNS label (RFC 1123, underscores tolerated): letters, digits, hyphens and underscores, 1–63. */
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** A last label that makes WHATWG URL read a host as an IPv4 address (decimal, octal or hex). */
const ENDS_IN_A_NUMBER = /^(?:\d+|0x[0-9a-f]*)$/;

/** A host name as the policy compares it: lower case, without brackets or a trailing dot. */
function normalName(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/** A name that always means this machine (RFC 6761): `localhost` and every name under it. */
function isLocalhostName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}

/** A parsed allow-list: address ranges and host names. */
export type OutboundAllowList = {
  ranges: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];
  /** Host names, lower case, no trailing dot: a URL naming one is allowed whatever it resolves to. */
  names: ReadonlySet<string>;
};

/**
 * Parses OUTPOST_OUTBOUND_ALLOW: comma-separated entries, each a CIDR range (`10.0.0.0/8`, `fd00::/8`), an
 * address (`127.0.0.1`, `::1`, `[::1]`: that one address) or a host name (`hooks.internal`: that name only,
 * whatever it resolves to). Spaces and empty entries are ignored; names are compared without case.
 * @returns the list, or null when an entry is none of these (an address must be in its standard form:
 *   `127.1` or `0x7f.0.0.1` are refused here).
 */
export function parseOutboundAllow(text: string): OutboundAllowList | null {
  const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  const names = new Set<string>();
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const slash = entry.indexOf('/');
    if (slash >= 0) {
      const address = normalName(entry.slice(0, slash));
      const bits = entry.slice(slash + 1);
      if (isIP(address) === 0 || !/^\d{1,3}$/.test(bits)) return null;
      const cidr = `${address}/${Number(bits)}`;
      if (!ipaddr.isValidCIDR(cidr)) return null;
      ranges.push(ipaddr.parseCIDR(cidr));
      continue;
    }
    const name = normalName(entry);
    const family = isIP(name);
    if (family !== 0) {
      ranges.push([ipaddr.parse(name), family === 4 ? 32 : 128]);
      continue;
    }
    const labels = name.split('.');
    if (name.length > 253 || !labels.every((label) => LABEL.test(label))) return null;
    // A name ending in a number is an IPv4 address to WHATWG URL (`0x7f.1`, `127.1`): not a name.
    if (ENDS_IN_A_NUMBER.test(labels[labels.length - 1]!)) return null;
    names.add(name);
  }
  return { ranges, names };
}

/** One address a name resolved to. */
export type ResolvedAddress = { address: string; family: 4 | 6 };

/** Resolves a host name to all its addresses (node:dns `lookup` with `all: true` by default). */
export type OutboundLookup = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** What the policy is built from (docs/configuration.md: OUTPOST_OUTBOUND_ALLOW, OUTPOST_OUTBOUND_PRIVATE). */
export type OutboundPolicyOptions = {
  /** Allow-list entries (see parseOutboundAllow); default none. */
  allow?: readonly string[];
  /** `deny` refuses private addresses too (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7); default `allow`. */
  privateNetworks?: 'allow' | 'deny';
  /**
   * The service's own listening port, or null while it does not listen: an address of this machine
   * (os.networkInterfaces) with that port is refused. Default: none.
   */
  ownPort?: () => number | null;
  /** Name resolution; default node:dns lookup of every address. Tests inject one. */
  lookup?: OutboundLookup;
  /** This machine's addresses; default every address of os.networkInterfaces(). */
  localAddresses?: () => readonly string[];
  /** Longest a name's resolution may take, ms; default 10 000. */
  lookupTimeoutMs?: number;
};

/** The variable an operator sets to allow a refused address, named in every refusal. */
const ALLOW_VARIABLE = 'OUTPOST_OUTBOUND_ALLOW';

/**
 * A connection the outbound policy refused: `message` is the reason in words, e.g. `refused: 127.0.0.1
 * is a loopback address; allow it with OUTPOST_OUTBOUND_ALLOW`. Permanent: the same address is refused
 * again.
 */
export class OutboundRefusedError extends Error {
  override readonly name = 'OutboundRefusedError';
  /** A stable code for callers that look at `code` (undici's error chain). */
  readonly code = 'OUTPOST_OUTBOUND_REFUSED';
}

const defaultLookup: OutboundLookup = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

function defaultLocalAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) out.push(a.address);
  }
  return out;
}

/** Whether two IP addresses are the same address (any spelling; IPv4-mapped IPv6 equals its IPv4). */
function sameAddress(a: string, b: string): boolean {
  try {
    return ipaddr.process(a).toNormalizedString() === ipaddr.process(b).toNormalizedString();
  } catch {
    return false;
  }
}

/**
 * The outbound address policy of one service: what addresses a user-given URL may reach. Refused unless
 * the allow-list names them: loopback, link-local, unspecified, multicast, broadcast and reserved
 * addresses (and IPv6 forms carrying such an IPv4 address), an address of this machine with the service's
 * own port, and private addresses when `privateNetworks` is `deny`. Thread-safe and immutable.
 */
export class OutboundPolicy {
  readonly #allow: OutboundAllowList;
  readonly #denyPrivate: boolean;
  readonly #ownPort: () => number | null;
  readonly #lookup: OutboundLookup;
  readonly #localAddresses: () => readonly string[];
  readonly #lookupTimeoutMs: number;

  /** @throws TypeError when an `allow` entry is not a CIDR range, an address or a host name. */
  constructor(options: OutboundPolicyOptions = {}) {
    const allow = parseOutboundAllow((options.allow ?? []).join(','));
    if (allow === null)
      throw new TypeError('an outbound allow-list entry is not a CIDR range, address or host name');
    this.#allow = allow;
    this.#denyPrivate = options.privateNetworks === 'deny';
    this.#ownPort = options.ownPort ?? (() => null);
    this.#lookup = options.lookup ?? defaultLookup;
    this.#localAddresses = options.localAddresses ?? defaultLocalAddresses;
    this.#lookupTimeoutMs = options.lookupTimeoutMs ?? 10_000;
  }

  /** Whether the allow-list names host `name` (lower case, no trailing dot). */
  #nameAllowed(name: string): boolean {
    return this.#allow.names.has(name);
  }

  /**
   * How the allow-list covers `address`: `single` when an entry is exactly that address (/32, /128),
   * `range` when a wider range holds it, null when none does. An IPv4-mapped IPv6 address is also
   * matched as its IPv4 address.
   */
  #allowed(address: string): 'single' | 'range' | null {
    const forms = [ipaddr.parse(address)];
    const processed = ipaddr.process(address);
    if (processed.kind() !== forms[0]!.kind()) forms.push(processed);
    let found: 'single' | 'range' | null = null;
    for (const form of forms) {
      for (const [net, bits] of this.#allow.ranges) {
        if (net.kind() !== form.kind() || !form.match(net, bits)) continue;
        if (bits === (form.kind() === 'ipv4' ? 32 : 128)) return 'single';
        found = 'range';
      }
    }
    return found;
  }

  /**
   * Why connecting to `address` on `port` is refused, without the `refused:` prefix (`127.0.0.1 is a
   * loopback address`), or null when it is allowed. `name` is the host name it was resolved from, if any.
   * @param address an IP address (net.isIP).
   * @param port the TCP port, 1–65535.
   */
  reason(address: string, port: number, name?: string): string | null {
    const cls = classifyAddress(address);
    const allowed = this.#allowed(address);
    const shown = cls.ipv4 === undefined ? address : `${address} (IPv4 ${cls.ipv4})`;
    const subject = name === undefined ? `${shown} is` : `${name} resolves to ${shown},`;
    // The service's own API on an address of this machine: only an entry naming that one address allows it.
    const own = this.#ownPort();
    if (own !== null && own === port && allowed !== 'single') {
      const local = this.#localAddresses();
      if (
        cls.kind === 'loopback' ||
        cls.kind === 'unspecified' ||
        local.some((l) => sameAddress(l, address))
      ) {
        return `${subject} this service's own address (port ${port})`;
      }
    }
    if (allowed !== null) return null;
    if (REFUSED_KINDS.has(cls.kind)) return `${subject} ${KIND_WORDS[cls.kind]}`;
    if (cls.kind === 'private' && this.#denyPrivate) {
      return `${subject} ${KIND_WORDS.private} and OUTPOST_OUTBOUND_PRIVATE is deny`;
    }
    return null;
  }

  /**
   * What a URL names without asking DNS, for validation when a channel is saved: an IP address in any
   * spelling WHATWG URL accepts (`http://2130706433/`, `http://0177.0.0.1/`, `http://127.1/`,
   * `http://[::ffff:127.0.0.1]/` are all normalised by `new URL`) is checked; `localhost` and names under
   * it count as 127.0.0.1 and ::1. Other names are checked when a notification is sent (they may resolve
   * differently by then).
   * @returns the refusal in words (`refused: …; allow it with OUTPOST_OUTBOUND_ALLOW`), or null when the
   *   URL is allowed, is not an http(s) URL, or names a host name that is checked at send time.
   */
  refusalOfUrl(url: string): string | null {
    if (!URL.canParse(url)) return null;
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
    const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
    const host = normalName(parsed.hostname);
    if (this.#nameAllowed(host)) return null;
    const addresses = isIP(host) !== 0 ? [host] : isLocalhostName(host) ? ['127.0.0.1', '::1'] : [];
    for (const address of addresses) {
      const why = this.reason(address, port, isIP(host) !== 0 ? undefined : host);
      if (why !== null) return refusal(why);
    }
    return null;
  }

  /**
   * Resolves `hostname` (an IP address is taken as it is) and checks every address it resolves to.
   * @param hostname a host name or IP address (IPv6 with or without brackets).
   * @param port the TCP port the connection goes to.
   * @returns the first address, the one to connect to (every address passed).
   * @throws OutboundRefusedError naming the first refused address; the lookup's own error (ENOTFOUND,
   *   EAI_AGAIN, …) when the name does not resolve; an error with code EAI_AGAIN when the lookup takes
   *   longer than `lookupTimeoutMs`.
   */
  async resolve(hostname: string, port: number): Promise<ResolvedAddress> {
    const host = normalName(hostname);
    const family = isIP(host);
    if (family !== 0) {
      const why = this.reason(host, port);
      if (why !== null) throw new OutboundRefusedError(refusal(why));
      return { address: host, family: family === 6 ? 6 : 4 };
    }
    const addresses = await this.#lookupBounded(host);
    if (addresses.length === 0) {
      throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
    }
    if (!this.#nameAllowed(host)) {
      for (const { address } of addresses) {
        const why = this.reason(address, port, host);
        if (why !== null) throw new OutboundRefusedError(refusal(why));
      }
    }
    return addresses[0]!;
  }

  async #lookupBounded(host: string): Promise<readonly ResolvedAddress[]> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            Object.assign(new Error(`the lookup of ${host} took longer than ${this.#lookupTimeoutMs} ms`), {
              code: 'EAI_AGAIN',
            }),
          ),
        this.#lookupTimeoutMs,
      );
      timer.unref();
    });
    try {
      return await Promise.race([this.#lookup(host), late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** `refused: {why}; allow it with OUTPOST_OUTBOUND_ALLOW`. */
function refusal(why: string): string {
  return `refused: ${why}; allow it with ${ALLOW_VARIABLE}`;
}

/** The policy of a service built without one: no allow-list, private addresses allowed, no own port. */
let defaultPolicy: OutboundPolicy | undefined;

/** The default policy (no allow-list, private networks allowed): what a sender uses when given none. */
export function defaultOutboundPolicy(): OutboundPolicy {
  defaultPolicy ??= new OutboundPolicy();
  return defaultPolicy;
}

/**
 * An undici connector that asks `policy` before every new connection: it resolves the origin's host,
 * checks every address, and connects to the first one only (TLS still verifies, and sends as SNI, the
 * URL's host name), so the address connected to is always one that was checked. A refusal fails the
 * connection with OutboundRefusedError; a lookup error fails it with that error.
 * @param options the connector's own options (connect timeout, …), as undici's buildConnector takes them.
 */
export function pinnedConnector(
  policy: OutboundPolicy,
  options: buildConnector.BuildOptions = {},
): buildConnector.connector {
  const connect = buildConnector(options);
  return (opts, callback) => {
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
    policy.resolve(opts.hostname, port).then(
      ({ address }) => {
        const name = normalName(opts.hostname);
        const servername = opts.servername ?? (isIP(name) === 0 ? name : undefined);
        try {
          connect(
            { ...opts, hostname: address, ...(servername === undefined ? {} : { servername }) },
            callback,
          );
        } catch (err) {
          callback(err instanceof Error ? err : new Error(String(err)), null);
        }
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null),
    );
  };
}
