import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Memory of browser processes and of the machine, read from /proc and cgroup v2: the
 * proportional set size (PSS) of a browser host's processes, and the headroom left for one more
 * browser check. The parsers are pure (tested on strings); the readers read each file once,
 * asynchronously, and never more than {@link MAX_PROC_FILE_BYTES} of it.
 */

/** Most bytes read of one /proc or cgroup file (smaps_rollup is ≈ 1 KiB, stat ≈ 300 bytes, meminfo ≈ 1.5 KiB). */
export const MAX_PROC_FILE_BYTES = 8192;

/** Most processes a process tree may hold for its PSS: a host has ≈ 10 (Chromium's browser, zygotes, GPU, renderers). */
export const MAX_TREE_PROCESSES = 1024;

/** Files read at once when listing processes. */
const READ_BATCH = 32;

/** One process as `/proc/<pid>/stat` describes it. */
export type ProcStat = {
  pid: number;
  /** The process's name (`comm`, at most 15 characters, may hold spaces and parentheses). */
  comm: string;
  /** R, S, D, Z (zombie), T (stopped), … */
  state: string;
  ppid: number;
  /** Process group id. */
  pgid: number;
};

/**
 * Parses `/proc/<pid>/stat`. The name sits between the first `(` and the last `)` and may hold
 * anything, so the fields after it are found from the last `)`.
 *
 * @param text the file's content.
 * @returns the process, or null when the text is not a stat line.
 */
export function parseProcStat(text: string): ProcStat | null {
  const nameStart = text.indexOf('(');
  const nameEnd = text.lastIndexOf(')');
  if (nameStart < 1 || nameEnd < nameStart) return null;
  const pid = Number(text.slice(0, nameStart).trim());
  const rest = text
    .slice(nameEnd + 1)
    .trim()
    .split(/\s+/);
  const [state, ppid, pgid] = [rest[0], Number(rest[1]), Number(rest[2])];
  if (!Number.isInteger(pid) || state === undefined || !Number.isInteger(ppid) || !Number.isInteger(pgid)) {
    return null;
  }
  return { pid, comm: text.slice(nameStart + 1, nameEnd), state, ppid, pgid };
}

/**
 * The `Pss:` line of `/proc/<pid>/smaps_rollup`, bytes. PSS divides each shared page among the
 * processes mapping it, so the PSS of Chromium's processes adds up to what they cost together
 * (summed RSS would count the shared libraries and zygote pages once per process).
 *
 * @param text the file's content.
 * @returns bytes, or null when there is no `Pss:` line (a kernel thread, a zombie).
 */
export function parseSmapsRollupPss(text: string): number | null {
  const match = /^Pss:\s+(\d+) kB$/m.exec(text);
  return match ? Number(match[1]) * 1024 : null;
}

/**
 * `MemAvailable` of `/proc/meminfo`: what can be allocated without swapping, bytes.
 *
 * @param text the file's content.
 * @returns bytes, or null when the line is missing (kernels before 3.14).
 */
export function parseMemAvailable(text: string): number | null {
  const match = /^MemAvailable:\s+(\d+) kB$/m.exec(text);
  return match ? Number(match[1]) * 1024 : null;
}

/**
 * The cgroup v2 path of a process from `/proc/<pid>/cgroup`: the `0::<path>` line.
 *
 * @param text the file's content.
 * @returns the path (`/` at the root, `/system.slice/outpost.service`), or null under cgroup v1 only.
 */
export function parseCgroupV2Path(text: string): string | null {
  const match = /^0::(\/.*)$/m.exec(text);
  return match ? (match[1] as string) : null;
}

/**
 * A cgroup v2 memory file (`memory.max`, `memory.current`): a number of bytes, or `max`.
 *
 * @param text the file's content.
 * @returns bytes, or null for `max` (no limit) or anything that is not a number.
 */
export function parseCgroupBytes(text: string): number | null {
  const value = text.trim();
  if (!/^\d+$/.test(value)) return null;
  return Number(value);
}

/** What the headroom is computed from, bytes; null where unknown or unlimited. */
export type MemoryReadings = {
  /** MemAvailable of the machine (or of the container, when /proc is virtualised). */
  memAvailableBytes: number | null;
  /** memory.max of the agent's cgroup; null when `max` or without cgroup v2. */
  cgroupMaxBytes: number | null;
  /** memory.current of the agent's cgroup. */
  cgroupCurrentBytes: number | null;
};

/**
 * Memory one more process may still take, bytes: the smaller of MemAvailable and, when the
 * agent's cgroup has a limit, `memory.max − memory.current` (a container may see the host's
 * MemAvailable while its own limit is far lower). Never negative.
 *
 * @returns bytes, or null when nothing is known (no /proc): the caller then admits by
 *   concurrency alone.
 */
export function headroomBytes(readings: MemoryReadings): number | null {
  const limits: number[] = [];
  if (readings.memAvailableBytes !== null) limits.push(readings.memAvailableBytes);
  if (readings.cgroupMaxBytes !== null && readings.cgroupCurrentBytes !== null) {
    limits.push(readings.cgroupMaxBytes - readings.cgroupCurrentBytes);
  }
  if (limits.length === 0) return null;
  return Math.max(0, Math.min(...limits));
}

/**
 * Reads at most {@link MAX_PROC_FILE_BYTES} of a file, as Latin-1 (every /proc file read here
 * is ASCII; a process name may not be, and is never decoded further).
 *
 * @returns the text, or null when the file cannot be read (the process exited, no /proc).
 */
export async function readBounded(path: string, maxBytes = MAX_PROC_FILE_BYTES): Promise<string | null> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, 'r');
    const buffer = Buffer.alloc(maxBytes);
    let length = 0;
    // /proc files come in several reads; stop at end of file or at the cap.
    while (length < maxBytes) {
      const { bytesRead } = await handle.read(buffer, length, maxBytes - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return buffer.toString('latin1', 0, length);
  } catch {
    return null;
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** Where {@link readHeadroom} reads from; tests point it at files of their own. */
export type HeadroomSources = {
  /** Default `/proc/meminfo`. */
  meminfo?: string;
  /** Default `/proc/self/cgroup`. */
  selfCgroup?: string;
  /** Where cgroup v2 is mounted; default `/sys/fs/cgroup`. */
  cgroupRoot?: string;
};

/**
 * The memory headroom of this process now, bytes ({@link headroomBytes} of MemAvailable and
 * the cgroup v2 limit of this process's cgroup when it has one). Four small async reads.
 *
 * @returns bytes, or null when neither /proc/meminfo nor a cgroup limit can be read.
 */
export async function readHeadroom(sources: HeadroomSources = {}): Promise<number | null> {
  const cgroupRoot = sources.cgroupRoot ?? '/sys/fs/cgroup';
  const [meminfo, selfCgroup] = await Promise.all([
    readBounded(sources.meminfo ?? '/proc/meminfo'),
    readBounded(sources.selfCgroup ?? '/proc/self/cgroup'),
  ]);
  let cgroupMaxBytes: number | null = null;
  let cgroupCurrentBytes: number | null = null;
  const path = selfCgroup === null ? null : parseCgroupV2Path(selfCgroup);
  if (path !== null) {
    // Inside a container with its own cgroup namespace the path is `/`: the mount's root files.
    const dir = join(cgroupRoot, path);
    const [max, current] = await Promise.all([
      readBounded(join(dir, 'memory.max')),
      readBounded(join(dir, 'memory.current')),
    ]);
    cgroupMaxBytes = max === null ? null : parseCgroupBytes(max);
    cgroupCurrentBytes = current === null ? null : parseCgroupBytes(current);
  }
  return headroomBytes({
    memAvailableBytes: meminfo === null ? null : parseMemAvailable(meminfo),
    cgroupMaxBytes,
    cgroupCurrentBytes,
  });
}

/**
 * Every process in /proc now, from its stat file (async reads, one per process). Processes that
 * exit while listing are left out.
 */
export async function listProcesses(procRoot = '/proc'): Promise<ProcStat[]> {
  const names = (await readdir(procRoot).catch(() => [] as string[])).filter((name) => /^\d+$/.test(name));
  const stats: ProcStat[] = [];
  // In batches: a few hundred files at once would hold as many descriptors.
  for (let at = 0; at < names.length; at += READ_BATCH) {
    const batch = await Promise.all(
      names.slice(at, at + READ_BATCH).map(async (name) => {
        const text = await readBounded(join(procRoot, name, 'stat'), 1024);
        return text === null ? null : parseProcStat(text);
      }),
    );
    for (const stat of batch) if (stat !== null) stats.push(stat);
  }
  return stats;
}

/**
 * The pids of `roots` and of everything below them (children, grandchildren, …), at most
 * {@link MAX_TREE_PROCESSES}, from a process list. Pure.
 *
 * @param processes a list such as {@link listProcesses} returns.
 * @param roots pids whose trees are wanted (a host child, its Chromium).
 */
export function treeOf(processes: ProcStat[], roots: number[]): number[] {
  const children = new Map<number, number[]>();
  const known = new Set<number>();
  for (const p of processes) {
    known.add(p.pid);
    const list = children.get(p.ppid) ?? [];
    list.push(p.pid);
    children.set(p.ppid, list);
  }
  const seen = new Set<number>();
  const queue = roots.filter((pid) => known.has(pid));
  while (queue.length > 0 && seen.size < MAX_TREE_PROCESSES) {
    const pid = queue.shift() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return [...seen];
}

/**
 * The PSS of a set of processes together, bytes: the sum of each one's
 * `/proc/<pid>/smaps_rollup` `Pss:` (async, bounded reads). Processes that exited meanwhile or
 * cannot be read count 0.
 *
 * @param pids the processes (from {@link treeOf}).
 * @returns bytes, or null when not one of them could be read (no /proc, no permission).
 */
export async function pssOf(pids: number[], procRoot = '/proc'): Promise<number | null> {
  const values = await Promise.all(
    pids.map(async (pid) => {
      const text = await readBounded(join(procRoot, String(pid), 'smaps_rollup'));
      return text === null ? null : parseSmapsRollupPss(text);
    }),
  );
  const read = values.filter((value): value is number => value !== null);
  return read.length === 0 ? null : read.reduce((sum, value) => sum + value, 0);
}

/**
 * The PSS of the process trees under `roots` together, bytes ({@link listProcesses},
 * {@link treeOf}, {@link pssOf}).
 *
 * @returns bytes, or null when it cannot be measured.
 */
export async function treePss(roots: number[], procRoot = '/proc'): Promise<number | null> {
  return pssOf(treeOf(await listProcesses(procRoot), roots), procRoot);
}
