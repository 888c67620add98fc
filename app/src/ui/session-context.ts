/** The signed-in session, for the pages that show what its role and person may do. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { SessionInfo } from '../api/session.js';

/** The session of the signed-in app (null outside it: the sign-in pages and component tests). */
export const SessionContext = createContext<SessionInfo | null>(null);

/** The signed-in session, or null when the page is rendered outside the signed-in app. */
export function useSession(): SessionInfo | null {
  return useContext(SessionContext);
}
