import type { RetentionTask } from '../platform/store/retention.js';
import { TriggerQueries } from './store.js';

/** Triggers' old data: the triggers of checks and check groups deleted since (their URL already answered 404). */
export const TRIGGERS_RETENTION: readonly RetentionTask[] = [
  { run: (pass) => pass.batches((limit) => new TriggerQueries(pass.db).deleteOrphans(limit)) },
];
