import type { RetentionTask } from '../platform/store/retention.js';
import { SubscriberQueries } from './admin/subscriber-store.js';
import { CONFIRMATION_TTL_MS } from './admin/subscribers.js';

/** Status pages' old data: subscribers who never confirmed, once their confirmation link expired. */
export const STATUS_PAGES_RETENTION: readonly RetentionTask[] = [
  {
    run: async (pass) => {
      await new SubscriberQueries(pass.db).deleteUnconfirmed(pass.nowMs - CONFIRMATION_TTL_MS);
      return 0;
    },
  },
];
