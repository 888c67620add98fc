import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ADDON_PATH } from '../../src/net/icmp/addon.js';

const PING_GROUP_RANGE = '/proc/sys/net/ipv4/ping_group_range';

/** The range that lets every group open unprivileged ICMP datagram sockets. */
export const OPEN_PING_GROUP_RANGE = '0 2147483647';
/** The kernel's default: nobody may open them. */
export const CLOSED_PING_GROUP_RANGE = '1 0';

/** True when the native ICMP addon is built (npm ci / npm rebuild). */
export function icmpAddonBuilt(): boolean {
  return existsSync(ADDON_PATH);
}

/** True when this process may write net.ipv4.ping_group_range (root in the initial user namespace). */
export function pingGroupRangeWritable(): boolean {
  try {
    const current = readFileSync(PING_GROUP_RANGE, 'utf8');
    writeFileSync(PING_GROUP_RANGE, current);
    return true;
  } catch {
    return false;
  }
}

/**
 * Sets net.ipv4.ping_group_range (as `sysctl -w` does) and returns a function that puts the
 * previous value back. Call the restorer in afterAll.
 */
export function setPingGroupRange(range: string): () => void {
  const previous = readFileSync(PING_GROUP_RANGE, 'utf8').trim().split(/\s+/).join(' ');
  writeFileSync(PING_GROUP_RANGE, range);
  return () => writeFileSync(PING_GROUP_RANGE, previous);
}

/** iputils ping's average RTT in ms over `count` packets sent every `intervalS` seconds. */
export function iputilsAverageRttMs(address: string, count: number, intervalS: number): number {
  const output = execFileSync(
    'ping',
    ['-n', '-q', '-c', String(count), '-i', String(intervalS), '-W', '2', address],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  const match = /= [\d.]+\/([\d.]+)\/[\d.]+\/[\d.]+ ms/.exec(output);
  if (!match?.[1]) throw new Error(`no rtt summary in ping output: ${output}`);
  return Number(match[1]);
}
