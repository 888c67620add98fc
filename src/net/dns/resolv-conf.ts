import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';

/** Where the system resolver's configuration lives (resolv.conf(5)). */
export const RESOLV_CONF_PATH = '/etc/resolv.conf';

/** The name server used when resolv.conf names none or cannot be read, as glibc does. */
export const FALLBACK_NAME_SERVER = '127.0.0.1';

/**
 * The `nameserver` addresses of a resolv.conf text, in order (resolv.conf(5)): comments (`#`,
 * `;`) and other keywords are ignored, as are values that are not IP addresses. A zone index
 * (`fe80::1%eth0`) is kept.
 */
export function parseResolvConf(text: string): string[] {
  const servers: string[] = [];
  for (const rawLine of text.split('\n')) {
    const line = rawLine.replace(/[#;].*$/, '').trim();
    const [keyword, value] = line.split(/\s+/);
    if (keyword !== 'nameserver' || value === undefined) continue;
    if (isIP(value.replace(/%.*$/, '')) !== 0) servers.push(value);
  }
  return servers;
}

/**
 * The system resolver's first name server: the first `nameserver` of resolv.conf, or
 * 127.0.0.1 when the file is missing, unreadable or names none. Read on every call (the file
 * may change, e.g. under DHCP); it is small.
 * @param path - resolv.conf to read; default /etc/resolv.conf.
 */
export async function systemNameServer(path: string = RESOLV_CONF_PATH): Promise<string> {
  try {
    return parseResolvConf(await readFile(path, 'utf8'))[0] ?? FALLBACK_NAME_SERVER;
  } catch {
    return FALLBACK_NAME_SERVER;
  }
}
