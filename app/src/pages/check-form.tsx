/**
 * Creating and editing checks of every type: `/checks/new` (a type picker), `/checks/new?type=API` (the
 * form of a new check of that type) and `/checks/{checkId}/edit`.
 *
 * A new check is created with `POST /v1/checks/{type}`; an edited one is loaded with `GET /v1/checks/{id}`
 * and sent back whole with `PUT /v1/checks/{id}` (what the form does not show goes back unchanged, so
 * editing loses no field). The service's validation is the source of truth: a `400` is shown next to the
 * control of the field it names (`attributes.field`, e.g. `request.assertions[0].target`), which gets the
 * focus; an error about a field without a control is shown at the top with the field's name.
 */
import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api, getAllPages } from '../api.js';
import { FormError } from '../components/forms.js';
import { ErrorNotice, Loading, PageHeader } from '../components/page.js';
import {
  CREATABLE_TYPES,
  type CreatableType,
  type Json,
  type SavedCheck,
  TYPE_INFO,
  advancedPaths,
  assembleBody,
  controlForField,
  editableFields,
  getIn,
  isObject,
  isScriptType,
  newCheckBody,
  parseAdvanced,
  setIn,
  splitCheck,
  typeFromQuery,
} from '../components/check-form-model.js';
import type { FormApi } from '../components/check-form-controls.js';
import {
  AlertChannelSection,
  ApiSection,
  DnsSection,
  GeneralSection,
  HeartbeatSection,
  IcmpSection,
  PingUrl,
  PlaywrightSection,
  ResponseTimeSection,
  RetrySection,
  ScheduleSection,
  ScriptSection,
  TcpSection,
  UrlSection,
  type References,
} from '../components/check-form-sections.js';
import { useLoad, useTitle } from '../hooks.js';
import type { Check, CheckType } from '../types.js';
import './check-form.css';

/**
 * Loads the lists the form offers choices from, each on its own: one that fails leaves its part of the form
 * as the check has it (with a notice) instead of failing the page.
 */
async function loadReferences(type: CheckType, signal: AbortSignal): Promise<References> {
  const settle = async <T,>(load: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await load();
    } catch (err) {
      if (signal.aborted) throw err;
      return undefined;
    }
  };
  const [groups, privateLocations, runtimes, alertChannels, snippets] = await Promise.all([
    settle(() => getAllPages<{ id: number; name: string }>('/v1/check-groups', {}, signal)),
    settle(() =>
      api.get<{ id: string; name: string; slugName: string }[]>('/v1/private-locations', undefined, signal),
    ),
    settle(() =>
      api.get<{ name: string; stage: string; multiStepSupport: boolean; runtimeEndOfLife: string }[]>(
        '/v1/runtimes',
        undefined,
        signal,
      ),
    ),
    settle(() =>
      getAllPages<{ id: number; type: string; config: Record<string, unknown> }>(
        '/v1/alert-channels',
        {},
        signal,
      ),
    ),
    type === 'API'
      ? settle(() => getAllPages<{ id: number; name: string }>('/v1/snippets', {}, signal))
      : Promise.resolve([]),
  ]);
  const refs: References = {};
  if (groups) refs.groups = groups;
  if (privateLocations) refs.privateLocations = privateLocations;
  if (runtimes) refs.runtimes = runtimes;
  if (alertChannels) refs.alertChannels = alertChannels;
  if (snippets) refs.snippets = snippets;
  return refs;
}

/** The page: the type picker, a new check's form, or an existing check's. */
export default function CheckFormPage({ checkId }: { checkId?: string }) {
  const { query } = useLocation();
  if (checkId) return <EditCheck checkId={checkId} />;
  if (query.type === undefined) return <TypePicker />;
  const type = typeFromQuery(query.type);
  if (!type) return <TypePicker unknown={query.type} />;
  return <NewCheck key={type} type={type} />;
}

/** `/checks/new`: which type of check to create. */
function TypePicker({ unknown }: { unknown?: string }) {
  useTitle('New check');
  return (
    <section class="check-form-page">
      <nav class="breadcrumbs" aria-label="Breadcrumbs">
        <a href="/checks">Checks</a> <span aria-hidden="true">›</span> New check
      </nav>
      <PageHeader title="New check" />
      {unknown !== undefined ? (
        <div class="notice notice-error" role="alert">
          There is no check type “{unknown}”. Choose one of these.
        </div>
      ) : null}
      <p class="muted">What should the check test?</p>
      <ul class="type-picker">
        {CREATABLE_TYPES.map((t) => (
          <li key={t}>
            <a class="card type-card" href={`/checks/new?type=${t}`}>
              <span class="type-card-title">{TYPE_INFO[t].label}</span>
              <span class="type-card-summary">{TYPE_INFO[t].summary}</span>
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** `/checks/new?type=…`: a new check of `type`, its fields at the service's defaults. */
function NewCheck({ type }: { type: CreatableType }) {
  const label = TYPE_INFO[type].noun;
  useTitle(`New ${label}`);
  const refs = useLoad((signal) => loadReferences(type, signal), [type]);
  if (!refs.data) {
    return (
      <FormFrame title={`New ${label}`} crumb={`New ${label}`}>
        {refs.error ? <ErrorNotice error={refs.error} /> : <Loading what="Loading the form" />}
      </FormFrame>
    );
  }
  const initial = newCheckBody(type);
  // Subscribed to every channel, as the API's own default (autoAssignAlerts) would: shown, so it can change.
  if (refs.data.alertChannels) {
    initial.alertChannelSubscriptions = refs.data.alertChannels.map((c) => ({
      alertChannelId: c.id,
      activated: true,
    }));
  }
  return (
    <FormFrame title={`New ${label}`} crumb={`New ${label}`}>
      <CheckForm type={type} initial={initial} refs={refs.data} />
    </FormFrame>
  );
}

/** `/checks/{checkId}/edit`: the stored check in the form. */
function EditCheck({ checkId }: { checkId: string }) {
  const loaded = useLoad(
    async (signal) => {
      const check = await api.get<SavedCheck>(`/v1/checks/${encodeURIComponent(checkId)}`, undefined, signal);
      return { check, refs: await loadReferences(check.checkType, signal) };
    },
    [checkId],
  );
  const name = loaded.data?.check.name;
  useTitle(name ? `Edit ${name}` : 'Edit check');
  if (!loaded.data) {
    return (
      <FormFrame title="Edit check" crumb="Edit">
        {loaded.error ? <ErrorNotice error={loaded.error} /> : <Loading what="Loading the check" />}
      </FormFrame>
    );
  }
  const { check, refs } = loaded.data;
  return (
    <FormFrame title={`Edit ${check.name}`} crumb="Edit" check={check}>
      <CheckForm
        key={check.id}
        type={check.checkType}
        initial={editableFields(check)}
        refs={refs}
        checkId={check.id}
        pingUrl={check.pingUrl}
      />
    </FormFrame>
  );
}

/** Breadcrumbs and the page's heading around the form. */
function FormFrame({
  title,
  crumb,
  check,
  children,
}: {
  title: string;
  crumb: string;
  check?: Check;
  children: ComponentChildren;
}) {
  return (
    <section class="check-form-page">
      <nav class="breadcrumbs" aria-label="Breadcrumbs">
        <a href="/checks">Checks</a> <span aria-hidden="true">›</span>{' '}
        {check ? (
          <>
            <a href={`/checks/${encodeURIComponent(check.id)}`}>{check.name}</a>{' '}
            <span aria-hidden="true">›</span>{' '}
          </>
        ) : (
          <>
            <a href="/checks/new">New check</a> <span aria-hidden="true">›</span>{' '}
          </>
        )}
        {crumb}
      </nav>
      <PageHeader title={title} />
      {children}
    </section>
  );
}

/** An error being shown: its field (null: none), its message and, once placed, the control it is shown at. */
type Problem = {
  field: string | null;
  message: string;
  /** The path of the control showing it; null: the top of the form; undefined: not placed yet. */
  at?: string | null;
};

/** `tags` from the comma-separated text: trimmed, empty ones and repeats left out. */
function parseTags(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== ''),
    ),
  ];
}

/** Rows left entirely blank (added, never filled) are dropped before sending, so indexes match the API's. */
function dropBlankRows(form: Json): Json {
  let next = form;
  const lists: [string, (row: Json) => boolean][] = [
    ['request.headers', (r) => !r.key && !r.value],
    ['request.queryParameters', (r) => !r.key && !r.value],
    ['environmentVariables', (r) => !r.key && !r.value],
    ['dependencies', (r) => !r.path && !r.content],
  ];
  for (const [path, blank] of lists) {
    const list = getIn(next, path);
    if (Array.isArray(list) && list.some((r) => isObject(r) && blank(r))) {
      next = setIn(
        next,
        path,
        list.filter((r) => !(isObject(r) && blank(r))),
      );
    }
  }
  return next;
}

/** The form's own checks of required fields, first failure only (the API checks everything else). */
function missingRequired(type: CheckType, form: Json): Problem | null {
  const required: [string, string][] = [['name', 'Name']];
  if (type === 'API' || type === 'URL') required.push(['request.url', 'URL']);
  if (type === 'TCP' || type === 'ICMP') required.push(['request.hostname', 'Hostname']);
  if (type === 'TCP') required.push(['request.port', 'Port']);
  if (type === 'DNS') required.push(['request.query', 'Query']);
  if (type === 'BROWSER' || type === 'MULTI_STEP') required.push(['script', 'Script']);
  if (type === 'HEARTBEAT') {
    const hb = getIn(form, 'heartbeat');
    if (isObject(hb) && hb.schedule != null) required.push(['heartbeat.schedule', 'Cron schedule']);
    else required.push(['heartbeat.period', 'Period']);
    required.push(['heartbeat.grace', 'Grace']);
  }
  const rows: [string, string, string][] = [
    ['request.headers', 'key', 'Header {n} name'],
    ['request.queryParameters', 'key', 'Query parameter {n} name'],
    ['environmentVariables', 'key', 'Variable {n} name'],
    ['dependencies', 'path', 'File {n} path'],
  ];
  for (const [path, label] of required) {
    const value = getIn(form, path);
    if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
      return { field: path, message: `${label} is required.` };
    }
  }
  for (const [path, key, label] of rows) {
    const list = getIn(form, path);
    if (!Array.isArray(list)) continue;
    const at = list.findIndex((r) => isObject(r) && String(r[key] ?? '').trim() === '');
    if (at >= 0)
      return {
        field: `${path}[${at}].${key}`,
        message: `${label.replace('{n}', String(at + 1))} is required.`,
      };
  }
  return null;
}

/** The form of one check: a new one (no `checkId`) or an existing one. */
function CheckForm({
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
        saved = await api.post<SavedCheck>(`/v1/checks/${path}`, body, query);
      } else {
        saved = await api.put<SavedCheck>(`/v1/checks/${encodeURIComponent(checkId)}`, body);
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

/** After creating a heartbeat monitor: its ping URL, to copy into the job, and the way on. */
function HeartbeatCreated({ check }: { check: SavedCheck }) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);
  return (
    <div class="card heartbeat-created">
      <h2 ref={headingRef} tabIndex={-1}>
        <span aria-hidden="true">✓ </span>
        Heartbeat monitor “{check.name}” created
      </h2>
      <p>Make your job ping this URL each time it runs. Until the first ping, the monitor waits.</p>
      <PingUrl url={check.pingUrl ?? ''} />
      <p class="form-actions">
        <a class="button" href={`/checks/${encodeURIComponent(check.id)}`}>
          Open the monitor
        </a>
        <a class="button button-secondary" href="/checks">
          Back to the checks
        </a>
      </p>
    </div>
  );
}
