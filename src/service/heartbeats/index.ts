// What other modules may use of this one (docs/architecture.md, "Modules"): they import it from here
// only. Leaf files only (schemas, types, queries): a module's routes are registered through its
// ServiceModule (service-module.ts), so importing this file never loads them.
export { cronOf, HEARTBEAT_UNITS, MAX_SPAN_MS, MIN_PERIOD_MS, spanMs } from './expectation.js';
export type { Expectation, HeartbeatUnit } from './expectation.js';

// Last, in a group of its own: the check type's hooks import the checks module, whose HEARTBEAT schema
// reads the rules above while this file is still being evaluated.
export { HEARTBEAT_CHECK_HOOKS } from './check-type.js';
