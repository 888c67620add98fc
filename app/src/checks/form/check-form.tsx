/**
 * The form of one check: its state, the placement of errors at their controls, and sending it.
 */
import { useLayoutEffect, useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { type SavedCheck, createCheck, updateCheck } from '../../api/checks.js';
import { ApiError } from '../../api/client.js';
import { FormError } from '../../ui/forms.js';
import { type CreatableType, TYPE_INFO, isScriptType } from './model/types.js';
import type { FormApi } from './controls/inputs.js';
import { GeneralSection, type References } from './sections/general.js';
import type { CheckType } from '../../api/schemas.js';
import { HeartbeatCreated } from './frame.js';
import { type Problem, dropBlankRows, missingRequired, parseTags } from './validate.js';
import { PlaywrightSection } from './sections/script.js';
import { assembleBody } from './model/fields.js';
import type { Json } from './model/paths.js';
import { UrlSection } from './sections/network.js';
import { ResponseTimeSection } from './sections/schedule.js';
import { setIn } from './model/paths.js';
import { HeartbeatSection } from './sections/heartbeat.js';
import { ScheduleSection } from './sections/schedule.js';
import { TcpSection } from './sections/network.js';
import { parseAdvanced } from './model/fields.js';
import { ApiSection } from './sections/api.js';
import { IcmpSection } from './sections/network.js';
import { getIn } from './model/paths.js';
import { controlForField } from './model/paths.js';
import { RetrySection } from './sections/schedule.js';
import { advancedPaths } from './model/fields.js';
import { ScriptSection } from './sections/script.js';
import { splitCheck } from './model/fields.js';
import { AlertChannelSection } from './sections/alerting.js';
import { DnsSection } from './sections/network.js';

/** The form of one check: a new one (no `checkId`) or an existing one. */
export function CheckForm({
  type,
  initial,
  refs,
  checkId,
  pingUrl,
}: {
  type: CheckType;
  initial: Json;
  refs: References;
  checkId?: string;
  pingUrl?: string | undefined;
}) {
  const creating = checkId === undefined;
  const { route } = useLocation();
  const [parts] = useState(() => splitCheck(type, initial));
  const [form, setForm] = useState<Json>(parts.form);
  const [tagsText, setTagsText] = useState(() =>
    Array.isArray(parts.form.tags) ? (parts.form.tags as string[]).join(', ') : '',
  );
  const [advancedText, setAdvancedText] = useState(() => JSON.stringify(parts.advanced, null, 2));
  const [advancedOpen, setAdvancedOpen] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<SavedCheck | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const topErrorRef = useRef<HTMLDivElement>(null);

  // The paths of the controls rendered this time, for placing an error (see Problem.at).
  const shown = useRef<Set<string>>(new Set());
  shown.current = new Set();

  const fx: FormApi = {
    type,
    busy,
    get: (path) => getIn(form, path),
    set: (path, value) => setForm((current) => setIn(current, path, value)),
    error: (...paths) => {
      for (const p of paths) shown.current.add(p);
      return problem?.at != null && paths.includes(problem.at) ? problem.message : undefined;
    },
  };

  const advancedFields = advancedPaths(advancedText);
  const advancedError = fx.error('advanced', ...advancedFields);

  // Places a new problem at the control that shows its field (known once the form has rendered).
  useLayoutEffect(() => {
    if (!problem || problem.at !== undefined) return;
    const at = problem.field === null ? null : controlForField(problem.field, [...shown.current]);
    if (at !== null && (at === 'advanced' || advancedFields.includes(at))) setAdvancedOpen(true);
    setProblem({ ...problem, at });
  }, [problem]);

  // Then moves the focus to it: the first invalid control, else the error at the top.
  useEffect(() => {
    if (!problem || problem.at === undefined) return;
    const invalid = formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]');
    if (problem.at !== null && invalid) invalid.focus();
    else topErrorRef.current?.focus();
  }, [problem]);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setProblem(null);
    let advanced: Json;
    try {
      advanced = parseAdvanced(advancedText);
    } catch (err) {
      setProblem({ field: 'advanced', message: (err as Error).message });
      return;
    }
    const cleaned = dropBlankRows(form);
    if (cleaned !== form) setForm(cleaned);
    const missing = missingRequired(type, cleaned);
    if (missing) {
      setProblem(missing);
      return;
    }
    const body = assembleBody({
      hidden: parts.hidden,
      form: 'tags' in cleaned ? { ...cleaned, tags: parseTags(tagsText) } : cleaned,
      advanced,
    });
    setBusy(true);
    try {
      let saved: SavedCheck;
      if (creating) {
        const path = TYPE_INFO[type as CreatableType].path;
        // The subscriptions shown are the ones wanted: no channel is added on top of them.
        const query = refs.alertChannels ? { autoAssignAlerts: false } : undefined;
        saved = await createCheck(path, body, query);
      } else {
        saved = await updateCheck(checkId, body);
      }
      if (creating && type === 'HEARTBEAT' && saved.pingUrl) {
        setBusy(false);
        setCreated(saved);
        return;
      }
      route(`/checks/${encodeURIComponent(saved.id)}`);
    } catch (err) {
      setBusy(false);
      if (err instanceof ApiError) {
        setProblem({ field: err.status === 400 ? (err.field ?? null) : null, message: err.message });
      } else {
        setProblem({ field: null, message: err instanceof Error ? err.message : String(err) });
      }
    }
  };

  const cancel = (event: Event) => {
    // Back where the user came from when that was a page of the app; else the link's own address.
    if (window.history.length > 1 && document.referrer.startsWith(window.location.origin)) {
      event.preventDefault();
      window.history.back();
    }
  };

  if (created) return <HeartbeatCreated check={created} />;

  const topError =
    problem && problem.at === null
      ? new Error(problem.field ? `${problem.field}: ${problem.message}` : problem.message)
      : null;
  const scheduled = type !== 'HEARTBEAT';

  return (
    <form ref={formRef} class="check-form" noValidate onSubmit={submit} aria-busy={busy ? 'true' : undefined}>
      <div ref={topErrorRef} tabIndex={-1} class="form-top-error">
        <FormError error={topError} />
      </div>
      <GeneralSection fx={fx} tagsText={tagsText} onTags={setTagsText} />
      <TypeSections fx={fx} refs={refs} pingUrl={pingUrl} />
      {scheduled ? <ResponseTimeSection fx={fx} /> : null}
      {scheduled ? <ScheduleSection fx={fx} refs={refs} /> : null}
      {scheduled ? <RetrySection fx={fx} /> : null}
      {scheduled || refs.alertChannels ? (
        <AlertChannelSection fx={fx} refs={refs} creating={creating} />
      ) : null}
      <details
        class="advanced"
        open={advancedOpen}
        onToggle={(e) => setAdvancedOpen((e.currentTarget as HTMLDetailsElement).open)}
      >
        <summary>Advanced (JSON)</summary>
        <div class={advancedError ? 'field field-invalid' : 'field'}>
          <label for="check-advanced">Other fields (JSON)</label>
          <textarea
            id="check-advanced"
            class="code"
            rows={10}
            spellcheck={false}
            value={advancedText}
            aria-describedby={`check-advanced-hint${advancedError ? ' check-advanced-error' : ''}`}
            aria-invalid={advancedError ? 'true' : undefined}
            onInput={(e) => setAdvancedText(e.currentTarget.value)}
          />
          <p class="field-hint" id="check-advanced-hint">
            The check's fields the form has no control for (for example <code>alertSettings</code>,{' '}
            <code>useGlobalAlertSettings</code>, <code>triggerIncident</code>, <code>doubleCheck</code>,{' '}
            <code>groupOrder</code>
            {isScriptType(type) && type !== 'PLAYWRIGHT' ? (
              <>
                , <code>dependencies</code>
              </>
            ) : null}
            ), as one JSON object merged into what is sent; a <code>request</code> object here adds to the
            form's request. See the API reference for every field.
          </p>
          {advancedError ? (
            <p class="field-error" id="check-advanced-error" role="alert">
              <span aria-hidden="true">✕ </span>
              {advancedError}
            </p>
          ) : null}
        </div>
      </details>
      <div class="form-actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : creating ? 'Create check' : 'Save changes'}
        </button>
        <a
          class="button button-secondary"
          href={creating ? '/checks' : `/checks/${encodeURIComponent(checkId)}`}
          onClick={cancel}
        >
          Cancel
        </a>
        <span class="visually-hidden" role="status" aria-live="polite">
          {busy ? 'Saving the check…' : ''}
        </span>
      </div>
    </form>
  );
}

/** The sections of the check's own type. */
function TypeSections({
  fx,
  refs,
  pingUrl,
}: {
  fx: FormApi;
  refs: References;
  pingUrl?: string | undefined;
}) {
  switch (fx.type) {
    case 'API':
      return <ApiSection fx={fx} refs={refs} />;
    case 'URL':
      return <UrlSection fx={fx} />;
    case 'TCP':
      return <TcpSection fx={fx} />;
    case 'DNS':
      return <DnsSection fx={fx} />;
    case 'ICMP':
      return <IcmpSection fx={fx} />;
    case 'BROWSER':
    case 'MULTI_STEP':
      return <ScriptSection fx={fx} refs={refs} />;
    case 'PLAYWRIGHT':
      return <PlaywrightSection fx={fx} refs={refs} />;
    case 'HEARTBEAT':
      return <HeartbeatSection fx={fx} pingUrl={pingUrl} />;
    default:
      return (
        <p class="notice">
          The form has no controls of its own for {fx.type} checks: change their fields under Advanced (JSON).
        </p>
      );
  }
}
