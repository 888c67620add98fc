// What other modules and the service's wiring may use of this one (docs/architecture.md, "Modules"): they
// import it from here only. The module's routes are registered through its ServiceModule (service-module.ts).
export { passwordSignIn } from './sign-in.js';
export { ARGON2_OPTIONS, checkPassword, hashPassword, PASSWORD_MIN_CHARS } from './passwords.js';
export { normalizeEmail, presentUser, Users, type UserView } from './users.js';
export { totpAad } from './two-factor.js';
