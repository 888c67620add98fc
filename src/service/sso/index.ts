// What other modules may use of this one (docs/architecture.md, "Modules"): they import it from here
// only. The module's routes are registered through its ServiceModule (service-module.ts).
export { domainOf, isSsoOnly, mappedRole, type SsoFailure, ssoRequiredMessage } from './sso.js';
