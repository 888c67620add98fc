import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  claimRunUid,
  releaseRunUid,
  RunUserPool,
  runUidClaimName,
  userCodeIsolation,
} from '../../src/common/run-users.js';

// Two agents on one machine (`npm start` and a second `outpost agent`, as docs/first-10-minutes.md has a
// newcomer run) draw run users from the same ranges: a uid handed out by one must never be handed out by the
// other while it is held, or one account's code could signal, trace or reap another's. The claim is an
// abstract Unix socket name, which the kernel gives to one socket at a time and frees when its process dies.

const isolation = userCodeIsolation();
const why = isolation.available ? null : isolation.reason;
if (why !== null && process.env.CI === 'true')
  throw new Error(`run users are required under CI=true: ${why}`);
if (why !== null) console.warn(`skipping the run-user claim tests: ${why}`);

/** uids no other test uses (the pools' defaults are 61 000, 62 000 and 62 400). */
const FIRST = 64_100;

/** The abstract socket names bound in this network namespace now (`@` stands for the leading NUL). */
function boundNames(): string[] {
  return readFileSync('/proc/net/unix', 'latin1')
    .split('\n')
    .map((line) => line.split(/\s+/)[7] ?? '')
    .filter((name) => name.startsWith('@'));
}

/** Another agent, as far as the claim goes: a second Node process holding `uid`'s claim until killed. */
async function otherAgentHolding(uid: number) {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const s = require('node:net').createServer(); s.on('error', (e) => { console.log(e.code); process.exit(1); });
       s.listen({ path: String.fromCharCode(0) + process.argv[1] }, () => console.log('held'));`,
      runUidClaimName(uid).slice(1),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  expect(line.toString().trim()).toBe('held');
  return child;
}

const pools: { pool: RunUserPool; uids: number[] }[] = [];
afterEach(async () => {
  for (const { pool, uids } of pools.splice(0)) {
    await Promise.all(uids.map((uid) => pool.release({ uid, gid: uid })));
  }
});

function poolOf(first: number, count: number): RunUserPool & { taken: number[] } {
  const pool = new RunUserPool({ first, count }, { what: 'test' });
  const entry = { pool, uids: [] as number[] };
  pools.push(entry);
  const take = pool.take.bind(pool);
  return Object.assign(pool, {
    taken: entry.uids,
    take: () => {
      const user = take();
      entry.uids.push(user.uid);
      return user;
    },
  });
}

describe.skipIf(why !== null)('run users claimed machine-wide', () => {
  it('hands out no uid another agent holds, and says every uid is in use when it holds them all', async () => {
    const other = await otherAgentHolding(FIRST);
    try {
      const pool = poolOf(FIRST, 2);
      for (let round = 0; round < 4; round++) {
        const user = pool.take();
        expect(user.uid).toBe(FIRST + 1);
        await pool.release(user);
      }
      pool.take();
      expect(() => pool.take()).toThrow(/all 2 test uids from 64100 are in use/);
    } finally {
      other.kill('SIGKILL');
      await once(other, 'exit');
    }
    // The kernel freed the name with its process: the uid is handed out again.
    const pool = poolOf(FIRST, 1);
    expect(pool.take().uid).toBe(FIRST);
  });

  it('gives another agent no uid it handed out until the run was reaped', async () => {
    const pool = poolOf(FIRST + 10, 1);
    const user = pool.take();
    expect(boundNames()).toContain(`@${runUidClaimName(user.uid).slice(1)}`);
    const other = spawn(
      process.execPath,
      [
        '-e',
        `const s = require('node:net').createServer(); s.on('error', (e) => { console.log(e.code); process.exit(0); });
         s.listen({ path: String.fromCharCode(0) + process.argv[1] }, () => { console.log('held'); process.exit(0); });`,
        runUidClaimName(user.uid).slice(1),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const [line] = (await once(other.stdout!, 'data')) as [Buffer];
    expect(line.toString().trim()).toBe('EADDRINUSE');
    await pool.release(user);
    pool.taken.splice(0);
    expect(boundNames()).not.toContain(`@${runUidClaimName(user.uid).slice(1)}`);
  });

  it('names a claim with the whole socket address, so agents of Node 20 (which pads) and 22+ (which does not) meet', () => {
    expect(runUidClaimName(61_005)).toMatch(/^\0outpost\/run-user\/61005\/_+$/);
    expect(Buffer.byteLength(runUidClaimName(61_005))).toBe(108);
    expect(Buffer.byteLength(runUidClaimName(4_294_967_294))).toBe(108);
  });

  it("closes every connection to a claim at once: code that connects to it holds none of the agent's descriptors", async () => {
    const pool = poolOf(FIRST + 40, 1);
    const user = pool.take();
    const descriptors = () => readdirSync('/proc/self/fd').length;
    const before = descriptors();
    const connections = Array.from({ length: 50 }, () => {
      const socket = connect({ path: runUidClaimName(user.uid) });
      socket.on('error', () => {});
      socket.resume();
      return once(socket, 'close');
    });
    await Promise.all(connections);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(descriptors()).toBeLessThanOrEqual(before);
  });

  it('never hands one uid to two pools of one process', () => {
    const a = poolOf(FIRST + 20, 3);
    const b = poolOf(FIRST + 20, 3);
    const uids = [a.take().uid, b.take().uid, a.take().uid];
    expect(new Set(uids).size).toBe(3);
    expect(() => b.take()).toThrow(/all 3 test uids from 64120 are in use/);
  });

  it('holds no claim in a child it starts: a run user cannot keep a uid claimed past its reap', async () => {
    const pool = poolOf(FIRST + 30, 1);
    const user = pool.take();
    // A child started while the claim is held (close-on-exec: it does not inherit the socket).
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await pool.release(user);
      pool.taken.splice(0);
      expect(boundNames()).not.toContain(`@${runUidClaimName(user.uid).slice(1)}`);
      expect(claimRunUid(user.uid)).toBe(true);
      releaseRunUid(user.uid);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
