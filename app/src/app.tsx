import { useEffect, useState } from 'preact/hooks';
import { ErrorBoundary, LocationProvider, Route, Router, lazy, useLocation } from 'preact-iso';
import { onSignedOut, setCsrfToken } from './api/client.js';
import { type SessionInfo, fetchSession, signOut } from './api/session.js';
import { Layout } from './ui/layout.js';
import { ErrorNotice, Loading } from './ui/page.js';
import AcceptInvitation from './sign-in/accept-invitation.js';
import ForgotPassword from './sign-in/forgot-password.js';
import SignIn from './sign-in/page.js';
import ResetPassword from './sign-in/reset-password.js';
import { SessionContext } from './ui/permissions.js';

// Every page is its own chunk: the first page loads the shell and itself only.
const ChecksList = lazy(() => import('./checks/list/page.js'));
const CheckDetail = lazy(() => import('./checks/detail/page.js'));
const CheckForm = lazy(() => import('./checks/form/page.js'));
const ResultDetail = lazy(() => import('./results/page.js'));
const CheckSessionPage = lazy(() => import('./checks/session/page.js'));
const PrivateLocations = lazy(() => import('./locations/page.js'));
const AgentDetail = lazy(() => import('./locations/agent/page.js'));
const AlertChannels = lazy(() => import('./alerting/channels/page.js'));
const CheckGroups = lazy(() => import('./check-groups/page.js'));
const Incidents = lazy(() => import('./incidents/page.js'));
const StatusPages = lazy(() => import('./status-pages/page.js'));
const Settings = lazy(() => import('./settings/page.js'));

/** `/` goes to the checks. */
function Home() {
  const { route } = useLocation();
  useEffect(() => route('/checks', true), [route]);
  return null;
}

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        No page of the app has this address. <a href="/checks">Go to the checks</a>.
      </p>
    </section>
  );
}

/**
 * The app's routes. Every page has an address of its own (shareable, reloadable); the service answers the
 * app's index.html for each of these paths (src/service/platform/web/static.ts lists the same prefixes). Session
 * links (`checkSessionLink`) and alert links (`/checks/{checkId}/results/{resultId}`) resolve here.
 */
function Routes() {
  return (
    <Router>
      <Route path="/" component={Home} />
      <Route path="/checks" component={ChecksList} />
      <Route path="/checks/new" component={CheckForm} />
      <Route path="/checks/:checkId" component={CheckDetail} />
      <Route path="/checks/:checkId/edit" component={CheckForm} />
      <Route path="/checks/:checkId/results/:resultId" component={ResultDetail} />
      <Route
        path="/accounts/:accountId/checks/:checkId/check-sessions/:sessionId"
        component={CheckSessionPage}
      />
      <Route path="/private-locations" component={PrivateLocations} />
      <Route path="/private-locations/:locationId" component={PrivateLocations} />
      <Route path="/agents/:agentId" component={AgentDetail} />
      <Route path="/alert-channels" component={AlertChannels} />
      <Route path="/alert-channels/:channelId" component={AlertChannels} />
      <Route path="/check-groups" component={CheckGroups} />
      <Route path="/check-groups/:groupId" component={CheckGroups} />
      <Route path="/incidents" component={Incidents} />
      <Route path="/incidents/:incidentId" component={Incidents} />
      <Route path="/status-pages" component={StatusPages} />
      <Route path="/settings" component={Settings} />
      <Route path="/settings/:section" component={Settings} />
      <Route default component={NotFound} />
    </Router>
  );
}

/**
 * The app: asks the service whether this browser is signed in; signed out, every address shows the sign-in
 * form (and nothing of the account), and the address is kept so the page opens after signing in. Three
 * pages are shown signed in or not: asking for a password reset (`/forgot-password`), the link of a reset
 * email (`/reset-password`) and the link of an invitation email (`/accept-invitation`).
 */
export function App() {
  return (
    <LocationProvider>
      <Shell />
    </LocationProvider>
  );
}

/** The app inside its router: see {@link App}. */
function Shell() {
  const { path, route } = useLocation();
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    fetchSession().then(
      (s) => {
        setCsrfToken(s?.csrfToken ?? null);
        setSession(s);
      },
      (err: unknown) => setError(err instanceof Error ? err : new Error(String(err))),
    );
    return onSignedOut(() => {
      setCsrfToken(null);
      setSession(null);
    });
  }, []);

  const signedIn = (s: SessionInfo) => {
    setCsrfToken(s.csrfToken);
    setSession(s);
  };

  if (path === '/forgot-password') return <ForgotPassword />;
  if (path === '/reset-password') return <ResetPassword />;
  if (path === '/accept-invitation') {
    return (
      <AcceptInvitation
        onSignedIn={(s) => {
          signedIn(s);
          route('/checks');
        }}
      />
    );
  }
  if (error) return <ErrorNotice error={error} title="The service could not be reached" />;
  if (session === undefined) return <Loading />;
  if (session === null) return <SignIn onSignedIn={signedIn} />;
  return (
    <SessionContext.Provider value={session}>
      <Layout
        session={session}
        onSignOut={() => {
          signOut()
            .catch(() => undefined)
            .finally(() => {
              setCsrfToken(null);
              setSession(null);
            });
        }}
      >
        <ErrorBoundary>
          <Routes />
        </ErrorBoundary>
      </Layout>
    </SessionContext.Provider>
  );
}
