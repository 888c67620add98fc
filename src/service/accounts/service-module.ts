import type { ServiceModule } from '../module.js';
import { accountRoutes } from './routes.js';

/**
 * Accounts (docs/api.md, "Accounts"): read-only routes answering the caller's account and identity in the
 * hosted API's shapes, for its clients' first calls. Account rows are read through the platform's store.
 */
export const accountsModule: ServiceModule = {
  name: 'accounts',
  routes: accountRoutes,
};
