import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryQueries } from '../../../src/service/alerting/delivery/store.js';
import type { Database } from '../../../src/service/platform/store/schema.js';
import { type CapturedQuery, planningStore } from '../../helpers/query-plans.js';

// The delivery worker asks, on every pass (one per send in a burst), for the due notifications of each kind:
// to alert channels and, in slots of their own, to status-page subscribers. Each must read its kind's own
// partial index (0035_notification_kinds), never walk the other kind's due rows: with 1,000 alerts queued, the
// subscriber query read all of them on every pass. Read from SQLite's EXPLAIN QUERY PLAN of the SQL the
// store runs.

let db: Kysely<Database>;
let captured: CapturedQuery[];
let planOf: (query: CapturedQuery) => string[];

beforeAll(async () => {
  ({ db, captured, planOf } = await planningStore());
});
afterAll(async () => db.destroy());

describe("the delivery worker's statements", () => {
  it("read the due notifications of each kind from that kind's partial index", async () => {
    const store = new DeliveryQueries(db);
    for (const [kind, index] of [
      ['channel', 'alert_notifications_due_channel'],
      ['subscriber', 'alert_notifications_due_subscriber'],
    ] as const) {
      captured.length = 0;
      await store.claimable(Date.now(), 10, 8, kind, false);
      expect(captured.length, 'a pass without the sweep asks for due notifications only').toBe(1);
      const plan = planOf(captured[0]!).join(' | ');
      expect(plan).toContain(`SEARCH n USING INDEX ${index} (state=? AND next_attempt_at<?)`);
      expect(plan).not.toContain('TEMP B-TREE');
    }
  });

  it('look for abandoned sends by their lease, not by walking the due rows', async () => {
    const store = new DeliveryQueries(db);
    captured.length = 0;
    await store.claimable(Date.now(), 10, 8, 'channel', true);
    await store.failAbandoned(Date.now(), 10, 'test');
    const abandoned = captured.filter((q) => q.sql.includes('lease_expires_at'));
    expect(abandoned.length).toBe(2);
    for (const q of abandoned)
      expect(planOf(q).join(' | ')).toMatch(
        /USING INDEX alert_notifications_leases \(state=\? AND lease_expires_at<\?\)/,
      );
  });
});
