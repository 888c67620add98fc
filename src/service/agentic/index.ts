// What other modules may use of this one (docs/architecture.md, "Modules"): they import it from here
// only. Leaf files only (schemas, types, queries): a module's routes are registered through its
// ServiceModule (service-module.ts), so importing this file never loads them.
export { RepairSchema, UsageSchema } from './schemas.js';

// Last: the check type's hooks import the checks module, whose registry imports this file.
export { AGENTIC_CHECK_HOOKS } from './check-type.js';
