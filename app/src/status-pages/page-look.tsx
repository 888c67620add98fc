/**
 * A status page's look and address in its form (docs/api.md, "Status page"): the theme and its colours, the
 * logo and where it links, the favicon, and the custom domain with its verification.
 */
import { useState } from 'preact/hooks';
import type { StatusPage } from '../api/schemas.js';
import { verifyCustomDomain } from '../api/status-pages.js';
import { SelectField, TextField } from '../ui/forms.js';
import { errorOf, messageOf } from '../ui/widgets.js';

/** The 12 colour fields of a theme (the API's `themeColors.light` and `.dark`), with their labels. */
const COLOR_FIELDS = [
  ['bodyBackgroundColor', 'Page background'],
  ['headerBackgroundColor', 'Header background'],
  ['headerFontColor', 'Header text'],
  ['titleFontColor', 'Titles'],
  ['bodyFontColor', 'Text'],
  ['bodyFontColorMuted', 'Muted text'],
  ['navigationFontColor', 'Navigation links'],
  ['linkFontColor', 'Links'],
  ['cardBackgroundColor', 'Card background'],
  ['borderColor', 'Borders'],
  ['primaryButtonBackgroundColor', 'Button background'],
  ['primaryButtonFontColor', 'Button text'],
] as const;

/** A page's `themeColors`: `light` and `dark`, each colour field a CSS hex colour. */
export type ThemeColorsDraft = StatusPage['themeColors'];

/** The look of a page as its form edits it (text as typed; empty means none). */
export type LookDraft = {
  defaultTheme: 'LIGHT' | 'DARK' | 'AUTO';
  themeColors: ThemeColorsDraft | undefined;
  logo: string;
  redirectTo: string;
  favicon: string;
  customDomain: string;
};

/** The draft of `page`'s look; a new page starts with AUTO, the API's colours and no logo or domain. */
export function lookOf(page: StatusPage | undefined): LookDraft {
  return {
    defaultTheme: page?.defaultTheme ?? 'AUTO',
    themeColors: page?.themeColors,
    logo: page?.logo ?? '',
    redirectTo: page?.redirectTo ?? '',
    favicon: page?.favicon ?? '',
    customDomain: page?.customDomain ?? '',
  };
}

/** The look as the API takes it: empty texts are null; the colours only once there are (a new page takes the defaults). */
export function lookBody(look: LookDraft): Record<string, unknown> {
  const orNull = (text: string) => (text.trim() ? text.trim() : null);
  return {
    defaultTheme: look.defaultTheme,
    logo: orNull(look.logo),
    redirectTo: orNull(look.redirectTo),
    favicon: orNull(look.favicon),
    customDomain: orNull(look.customDomain),
    ...(look.themeColors ? { themeColors: look.themeColors } : {}),
  };
}

/** The body fields the look holds, for the form's errors. */
export const LOOK_FIELDS = [
  'defaultTheme',
  'logo',
  'redirectTo',
  'favicon',
  'customDomain',
  ...COLOR_FIELDS.flatMap(([f]) => [`themeColors.light.${f}`, `themeColors.dark.${f}`]),
];

/**
 * The fields of a page's look: theme, logo, logo link, favicon, custom domain (with its state and Check now
 * for a saved one), and the colours of each theme (folded away: most pages keep the defaults).
 */
export function LookFields({
  page,
  look,
  setLook,
  error,
  onDomainChecked,
}: {
  /** The saved page (undefined while creating one). */
  page: StatusPage | undefined;
  look: LookDraft;
  setLook: (look: LookDraft) => void;
  error: unknown;
  /** The saved page's custom domain was checked: its state may have changed. */
  onDomainChecked: (page: StatusPage) => void;
}) {
  const set = (patch: Partial<LookDraft>) => setLook({ ...look, ...patch });
  return (
    <fieldset class="sp-look">
      <legend>Look and address</legend>
      <SelectField
        label="Theme"
        hint="What visitors see: light, dark, or their system’s setting."
        error={errorOf(error, 'defaultTheme')}
        value={look.defaultTheme}
        onValue={(value) => set({ defaultTheme: value })}
        options={[
          { value: 'AUTO', label: 'Follow the visitor’s system' },
          { value: 'LIGHT', label: 'Light' },
          { value: 'DARK', label: 'Dark' },
        ]}
      />
      <TextField
        label="Logo (optional)"
        hint="The https address of an image, shown at the top of the page."
        type="url"
        error={errorOf(error, 'logo')}
        maxLength={2048}
        spellcheck={false}
        value={look.logo}
        onValue={(value) => set({ logo: value })}
      />
      <TextField
        label="Logo links to (optional)"
        hint="Your site’s address: the logo links there."
        type="url"
        error={errorOf(error, 'redirectTo')}
        maxLength={2048}
        spellcheck={false}
        value={look.redirectTo}
        onValue={(value) => set({ redirectTo: value })}
      />
      <TextField
        label="Favicon (optional)"
        hint="The https address of the icon browsers show in the tab."
        type="url"
        error={errorOf(error, 'favicon')}
        maxLength={2048}
        spellcheck={false}
        value={look.favicon}
        onValue={(value) => set({ favicon: value })}
      />
      <TextField
        label="Custom domain (optional)"
        hint="A host name such as status.example.com. The page is served there once the domain is verified."
        error={errorOf(error, 'customDomain')}
        maxLength={253}
        spellcheck={false}
        value={look.customDomain}
        onValue={(value) => set({ customDomain: value })}
      />
      {page?.customDomain && page.customDomain === look.customDomain.trim() ? (
        <DomainState page={page} onChecked={onDomainChecked} />
      ) : look.customDomain.trim() ? (
        <p class="field-hint">Save the page to get the DNS record that verifies the domain.</p>
      ) : null}
      <details class="sp-colors">
        <summary>Colours</summary>
        <p class="field-hint">
          CSS hex colours such as #1d4ed8. Left at the defaults, the page uses readable ones.
        </p>
        {look.themeColors ? (
          <div class="sp-color-themes">
            {(['light', 'dark'] as const).map((theme) => (
              <fieldset key={theme}>
                <legend>{theme === 'light' ? 'Light theme' : 'Dark theme'}</legend>
                <div class="sp-color-grid">
                  {COLOR_FIELDS.map(([field, label]) => {
                    const value = look.themeColors![theme][field];
                    return (
                      <div class="sp-color" key={field}>
                        <span class="sp-swatch" aria-hidden="true" style={{ background: value }} />
                        <TextField
                          label={`${label} (${theme})`}
                          error={errorOf(error, `themeColors.${theme}.${field}`)}
                          maxLength={9}
                          spellcheck={false}
                          value={value}
                          onValue={(text) =>
                            set({
                              themeColors: {
                                ...look.themeColors!,
                                [theme]: { ...look.themeColors![theme], [field]: text.trim() },
                              },
                            })
                          }
                        />
                      </div>
                    );
                  })}
                </div>
              </fieldset>
            ))}
          </div>
        ) : (
          <p class="muted">The page starts with the default colours: change them once it is created.</p>
        )}
      </details>
    </fieldset>
  );
}

/** A saved custom domain's state: verified, or pending with the record to add and Check now. */
function DomainState({ page, onChecked }: { page: StatusPage; onChecked: (page: StatusPage) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const record = page.customDomainVerification;

  async function check() {
    setBusy(true);
    setError(null);
    try {
      onChecked(await verifyCustomDomain(page.id));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  if (page.customDomainStatus === 'VERIFIED') {
    return (
      <p class="sp-domain-state" role="status">
        <span class="badge badge-passing">
          <span aria-hidden="true" class="badge-glyph">
            ●
          </span>
          Domain verified
        </span>{' '}
        The page is served at {page.customDomain}.
      </p>
    );
  }
  return (
    <div class="sp-domain-state">
      <p role="status">
        <span class="badge badge-pending">
          <span aria-hidden="true" class="badge-glyph">
            ○
          </span>
          Domain pending
        </span>{' '}
        {page.customDomainProblem ? `Last check: ${page.customDomainProblem}.` : 'Not checked yet.'}
      </p>
      {record ? (
        <p class="field-hint">
          Add a {record.type} record named <code>{record.name}</code> with the text{' '}
          <code>{record.value}</code>, then check it.
        </p>
      ) : null}
      <button type="button" class="button-secondary misc-small" disabled={busy} onClick={check}>
        {busy ? 'Checking…' : 'Check now'}
        <span class="visually-hidden"> {page.customDomain}</span>
      </button>
      {error ? (
        <p class="field-error" role="alert">
          {messageOf(error)}
        </p>
      ) : null}
    </div>
  );
}
