/**
 * Single sign-on (`/settings/sso`, `/v1/sso`; docs/teams.md, "Single sign-on"): the account's OpenID
 * Connect provider. An OWNER edits it; an ADMIN reads it. The redirect URI to register at the provider is
 * shown with a copy button. The client secret is written, never read back: the page says only whether one
 * is stored.
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { fetchSession } from '../api/session.js';
import { deleteSso, getSso, putSso, type Role, type SsoSettings } from '../api/sso.js';
import { formatDateTime } from '../ui/format.js';
import { FormError, SelectField, TextAreaField, TextField } from '../ui/forms.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { ErrorNotice, Loading, PageHeader } from '../ui/page.js';
import { Checkbox, ConfirmButton, errorOf, FormButtons, formLevelError, parseList } from '../ui/widgets.js';

const ROLE_OPTIONS: readonly { value: Role; label: string }[] = [
  { value: 'READ_ONLY', label: 'Read only' },
  { value: 'READ_WRITE', label: 'Read & write' },
  { value: 'ADMIN', label: 'Admin' },
  { value: 'OWNER', label: 'Owner' },
];

/** `group = ROLE` lines as the mapping; a line that is not one is reported by its number. */
export function parseGroupRoles(text: string): Record<string, Role> | { badLine: number } {
  const out: Record<string, Role> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const eq = line.lastIndexOf('=');
    const group = line.slice(0, eq).trim();
    const role = line
      .slice(eq + 1)
      .trim()
      .toUpperCase();
    if (eq < 1 || group === '' || !ROLE_OPTIONS.some((o) => o.value === role)) return { badLine: i + 1 };
    out[group] = role as Role;
  }
  return out;
}

/** The redirect URI with a copy button. */
function RedirectUri({ uri }: { uri: string }) {
  const [copied, setCopied] = useState<string>('');
  const ref = useRef<HTMLInputElement>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(uri);
      setCopied('Copied to the clipboard.');
    } catch {
      ref.current?.select();
      setCopied('The browser did not allow copying: the address is selected, press Ctrl+C (⌘C).');
    }
  }
  return (
    <div class="card sso-redirect">
      <label for="sso-redirect-uri">Redirect URI to register at your provider</label>
      <div class="misc-secret-row">
        <input
          id="sso-redirect-uri"
          ref={ref}
          class="misc-secret-value"
          type="text"
          readOnly
          value={uri}
          spellcheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          Copy <span class="visually-hidden">the redirect URI</span>
        </button>
      </div>
      <p aria-live="polite" class="muted">
        {copied}
      </p>
    </div>
  );
}

/** The single sign-on page. */
export function SsoPage() {
  useTitle('Single sign-on · Settings');
  const settings = useLoad((signal) => getSso(signal), []);
  const session = useLoad(() => fetchSession(), []);
  const [status, setStatus] = useState('');
  const owner = session.data?.role === 'OWNER';

  let body: preact.JSX.Element;
  if (settings.error && !settings.data) {
    body =
      settings.error instanceof ApiError && settings.error.status === 403 ? (
        <p class="notice">Only an ADMIN or OWNER of the account sees its single sign-on.</p>
      ) : (
        <ErrorNotice error={settings.error} />
      );
  } else if (!settings.data || !session.data) {
    body = <Loading what="Loading single sign-on" />;
  } else {
    const data = settings.data;
    body = (
      <>
        <RedirectUri uri={data.redirectUri} />
        {owner ? (
          <SsoForm
            settings={data}
            onSaved={(saved) => {
              setStatus(`Saved: people sign in through ${saved.issuer}.`);
              settings.reload();
            }}
          />
        ) : (
          <SsoSummary settings={data} />
        )}
        {owner && data.enabled ? (
          <ConfirmButton
            label="Turn single sign-on off"
            question={
              <>
                Turn single sign-on off? People it created keep their accounts but cannot sign in until they
                set a password.
              </>
            }
            confirmLabel="Turn off"
            onConfirm={async () => {
              await deleteSso();
              setStatus('Single sign-on is off.');
              settings.reload();
            }}
          />
        ) : null}
      </>
    );
  }

  return (
    <>
      <PageHeader title="Single sign-on" />
      <p class="muted st-intro">
        People of the account sign in through your OpenID Connect provider (Keycloak, Authentik, Google, Okta,
        …). The first sign-in creates their person with the role their groups map to, or the default role.
        {owner ? null : ' Only an OWNER changes these settings.'}
      </p>
      <p role="status" class="muted">
        {status}
      </p>
      {body}
    </>
  );
}

/** The settings, read only (an ADMIN's view). */
function SsoSummary({ settings }: { settings: SsoSettings }) {
  if (!settings.enabled) return <p>Single sign-on is off.</p>;
  const groups = Object.entries(settings.groupRoles);
  return (
    <dl class="card sso-summary">
      <dt>Issuer</dt>
      <dd>{settings.issuer}</dd>
      <dt>Client id</dt>
      <dd>{settings.clientId}</dd>
      <dt>Client secret</dt>
      <dd>{settings.clientSecretConfigured ? 'Stored (never shown)' : 'None'}</dd>
      <dt>Default role</dt>
      <dd>{settings.defaultRole}</dd>
      <dt>Groups</dt>
      <dd>
        {settings.groupsClaim === null || groups.length === 0
          ? 'Not read'
          : `${settings.groupsClaim}: ${groups.map(([g, r]) => `${g} → ${r}`).join(', ')}`}
      </dd>
      <dt>Allowed email domains</dt>
      <dd>{settings.allowedDomains.length === 0 ? 'Any' : settings.allowedDomains.join(', ')}</dd>
      <dt>Single sign-on only</dt>
      <dd>{settings.ssoOnly ? 'Yes' : 'No'}</dd>
      <dt>Changed</dt>
      <dd>{formatDateTime(settings.updatedAt)}</dd>
    </dl>
  );
}

/** The OWNER's form. */
function SsoForm({ settings, onSaved }: { settings: SsoSettings; onSaved: (s: SsoSettings) => void }) {
  const [issuer, setIssuer] = useState(settings.issuer ?? '');
  const [clientId, setClientId] = useState(settings.clientId ?? '');
  const [clientSecret, setClientSecret] = useState('');
  const [defaultRole, setDefaultRole] = useState<Role>(settings.defaultRole);
  const [groupsClaim, setGroupsClaim] = useState(settings.groupsClaim ?? '');
  const [groupRoles, setGroupRoles] = useState(
    Object.entries(settings.groupRoles)
      .map(([g, r]) => `${g} = ${r}`)
      .join('\n'),
  );
  const [domains, setDomains] = useState(settings.allowedDomains.join(', '));
  const [ssoOnly, setSsoOnly] = useState(settings.ssoOnly);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [mappingError, setMappingError] = useState<string | undefined>(undefined);

  async function submit(event: Event) {
    event.preventDefault();
    const mapping = parseGroupRoles(groupRoles);
    if ('badLine' in mapping) {
      setMappingError(
        `Line ${mapping.badLine} is not “group = ROLE” (READ_ONLY, READ_WRITE, ADMIN or OWNER).`,
      );
      return;
    }
    setMappingError(undefined);
    setBusy(true);
    setError(null);
    try {
      const saved = await putSso({
        issuer: issuer.trim(),
        clientId: clientId.trim(),
        ...(clientSecret === '' ? {} : { clientSecret }),
        defaultRole,
        groupsClaim: groupsClaim.trim() === '' ? null : groupsClaim.trim(),
        groupRoles: mapping,
        allowedDomains: parseList(domains),
        ssoOnly,
      });
      setClientSecret('');
      onSaved(saved);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const fields = ['issuer', 'clientId', 'clientSecret', 'groupsClaim', 'groupRoles', 'allowedDomains'];
  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-label="Single sign-on settings">
      <TextField
        label="Issuer URL"
        hint="The provider’s issuer, e.g. https://keycloak.example.com/realms/acme or https://accounts.google.com. Outpost reads its /.well-known/openid-configuration when you save."
        type="url"
        value={issuer}
        onValue={setIssuer}
        error={errorOf(error, 'issuer')}
        required
        spellcheck={false}
      />
      <TextField
        label="Client id"
        value={clientId}
        onValue={setClientId}
        error={errorOf(error, 'clientId')}
        required
        spellcheck={false}
      />
      <TextField
        label="Client secret"
        hint={
          settings.clientSecretConfigured
            ? 'A secret is stored. Leave this empty to keep it; it is never shown again.'
            : 'Stored encrypted; never shown again.'
        }
        type="password"
        autoComplete="off"
        value={clientSecret}
        onValue={setClientSecret}
        error={errorOf(error, 'clientSecret')}
      />
      <SelectField
        label="Default role of new people"
        value={defaultRole}
        onValue={setDefaultRole}
        options={ROLE_OPTIONS}
      />
      <TextField
        label="Groups claim (optional)"
        hint="The claim that lists the person’s groups, e.g. groups. With a mapping below, the role is read from it at each sign-in."
        value={groupsClaim}
        onValue={setGroupsClaim}
        error={errorOf(error, 'groupsClaim')}
        spellcheck={false}
      />
      <TextAreaField
        label="Group → role mapping"
        hint="One “group = ROLE” per line; the highest role of the person’s groups wins."
        rows={4}
        value={groupRoles}
        onValue={setGroupRoles}
        error={mappingError ?? errorOf(error, 'groupRoles')}
        spellcheck={false}
      />
      <TextField
        label="Allowed email domains"
        hint="Comma-separated, e.g. example.com. People of these domains are sent to your provider; empty: only people already in the account."
        value={domains}
        onValue={setDomains}
        error={errorOf(error, 'allowedDomains')}
        spellcheck={false}
      />
      <Checkbox
        label="Single sign-on only"
        checked={ssoOnly}
        onChange={setSsoOnly}
        hint="People cannot sign in to this app with a password or an API key; API keys keep working on the API."
      />
      <FormError error={formLevelError(error, fields)} />
      <FormButtons label="Save single sign-on" busy={busy} busyLabel="Checking the provider…" />
    </form>
  );
}
