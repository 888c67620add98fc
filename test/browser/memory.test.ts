import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  headroomBytes,
  listProcesses,
  parseCgroupBytes,
  parseCgroupV2Path,
  parseMemAvailable,
  parseProcStat,
  parseSmapsRollupPss,
  pssOf,
  readBounded,
  readHeadroom,
  treeOf,
  treePss,
} from '../../src/browser/memory.js';

/** The memory readings of browser hosts: /proc and cgroup v2 parsers on real file shapes, and the readers. */

const SMAPS_ROLLUP = `55d1c7a00000-7ffd3b1f1000 ---p 00000000 00:00 0                          [rollup]
Rss:              206196 kB
Pss:              101377 kB
Pss_Dirty:         61442 kB
Pss_Anon:          60120 kB
Pss_File:          40935 kB
Pss_Shmem:           322 kB
Shared_Clean:     105448 kB
Shared_Dirty:        248 kB
Private_Clean:     39076 kB
Private_Dirty:     61424 kB
Referenced:       206196 kB
Anonymous:         60120 kB
Swap:                  0 kB
SwapPss:               0 kB
Locked:                0 kB
`;

const MEMINFO = `MemTotal:       24684092 kB
MemFree:        23240856 kB
MemAvailable:   23698964 kB
Buffers:          123456 kB
Cached:           654321 kB
`;

describe('memory parsers', () => {
  it('reads Pss of smaps_rollup in bytes, not Rss or Pss_Anon', () => {
    expect(parseSmapsRollupPss(SMAPS_ROLLUP)).toBe(101_377 * 1024);
    expect(parseSmapsRollupPss('Rss: 10 kB\n')).toBeNull();
    expect(parseSmapsRollupPss('')).toBeNull();
  });

  it('reads MemAvailable of meminfo in bytes', () => {
    expect(parseMemAvailable(MEMINFO)).toBe(23_698_964 * 1024);
    expect(parseMemAvailable('MemTotal: 1 kB\nMemFree: 1 kB\n')).toBeNull();
  });

  it('parses stat lines whose process name holds spaces and parentheses', () => {
    expect(parseProcStat('23049 (chromium) S 23038 23049 23049 0 -1 4194560 1234 0 0 0')).toEqual({
      pid: 23049,
      comm: 'chromium',
      state: 'S',
      ppid: 23038,
      pgid: 23049,
    });
    expect(parseProcStat('77 (a) b (c)) Z 1 77 77 0')).toEqual({
      pid: 77,
      comm: 'a) b (c)',
      state: 'Z',
      ppid: 1,
      pgid: 77,
    });
    expect(parseProcStat('garbage')).toBeNull();
    expect(parseProcStat('12 (x) S notanumber 1')).toBeNull();
  });

  it('finds the cgroup v2 path and reads memory.max and memory.current', () => {
    expect(parseCgroupV2Path('0::/system.slice/outpost.service\n')).toBe('/system.slice/outpost.service');
    expect(parseCgroupV2Path('12:memory:/docker/abc\n0::/\n')).toBe('/');
    // cgroup v1 only: no unified line.
    expect(parseCgroupV2Path('4:memory:/process_api/e488\n1:cpu:/\n')).toBeNull();
    expect(parseCgroupBytes('max\n')).toBeNull();
    expect(parseCgroupBytes('1073741824\n')).toBe(1_073_741_824);
    expect(parseCgroupBytes('')).toBeNull();
  });

  it('headroom is the smaller of MemAvailable and the cgroup limit minus its usage, never negative', () => {
    const GiB = 1024 ** 3;
    expect(
      headroomBytes({ memAvailableBytes: 8 * GiB, cgroupMaxBytes: 2 * GiB, cgroupCurrentBytes: GiB }),
    ).toBe(GiB);
    expect(headroomBytes({ memAvailableBytes: GiB, cgroupMaxBytes: 8 * GiB, cgroupCurrentBytes: GiB })).toBe(
      GiB,
    );
    expect(headroomBytes({ memAvailableBytes: 8 * GiB, cgroupMaxBytes: null, cgroupCurrentBytes: GiB })).toBe(
      8 * GiB,
    );
    expect(headroomBytes({ memAvailableBytes: null, cgroupMaxBytes: GiB, cgroupCurrentBytes: 2 * GiB })).toBe(
      0,
    );
    expect(
      headroomBytes({ memAvailableBytes: null, cgroupMaxBytes: null, cgroupCurrentBytes: null }),
    ).toBeNull();
  });

  it('builds the process tree under given roots from a process list', () => {
    const list = [
      { pid: 1, ppid: 0, pgid: 1, state: 'S', comm: 'init' },
      { pid: 10, ppid: 1, pgid: 10, state: 'S', comm: 'node' },
      { pid: 11, ppid: 10, pgid: 11, state: 'S', comm: 'chromium' },
      { pid: 12, ppid: 11, pgid: 11, state: 'S', comm: 'chromium' },
      { pid: 13, ppid: 12, pgid: 11, state: 'S', comm: 'chromium' },
      { pid: 20, ppid: 1, pgid: 20, state: 'S', comm: 'other' },
    ];
    expect(treeOf(list, [10]).sort((a, b) => a - b)).toEqual([10, 11, 12, 13]);
    expect(treeOf(list, [12, 20]).sort((a, b) => a - b)).toEqual([12, 13, 20]);
    expect(treeOf(list, [99])).toEqual([]);
  });
});

describe('memory readers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-memory-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a cgroup v2 limit below MemAvailable as the headroom', async () => {
    writeFileSync(join(dir, 'meminfo'), MEMINFO);
    writeFileSync(join(dir, 'cgroup'), '0::/outpost\n');
    mkdirSync(join(dir, 'fs', 'outpost'), { recursive: true });
    writeFileSync(join(dir, 'fs', 'outpost', 'memory.max'), `${2 * 1024 ** 3}\n`);
    writeFileSync(join(dir, 'fs', 'outpost', 'memory.current'), `${1024 ** 3 + 5}\n`);
    const sources = {
      meminfo: join(dir, 'meminfo'),
      selfCgroup: join(dir, 'cgroup'),
      cgroupRoot: join(dir, 'fs'),
    };
    expect(await readHeadroom(sources)).toBe(1024 ** 3 - 5);
    writeFileSync(join(dir, 'fs', 'outpost', 'memory.max'), 'max\n');
    expect(await readHeadroom(sources)).toBe(23_698_964 * 1024);
    expect(await readHeadroom({ meminfo: join(dir, 'none'), selfCgroup: join(dir, 'none') })).toBeNull();
  });

  it('reads this machine: a headroom, this process in the list, its PSS', async () => {
    const headroom = await readHeadroom();
    expect(headroom).toBeGreaterThan(0);
    const list = await listProcesses();
    const self = list.find((p) => p.pid === process.pid);
    expect(self?.ppid).toBe(process.ppid);
    const pss = await treePss([process.pid]);
    // This Node process alone: tens of MiB.
    expect(pss).toBeGreaterThan(10 * 1024 * 1024);
    expect(await pssOf([2 ** 22 + 1])).toBeNull();
  });

  it('reads no more than the cap of a file', async () => {
    writeFileSync(join(dir, 'big'), 'x'.repeat(100_000));
    expect((await readBounded(join(dir, 'big'), 1000))?.length).toBe(1000);
    expect(await readBounded(join(dir, 'missing'))).toBeNull();
  });
});
