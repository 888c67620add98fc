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
import { AlertChannelSection, AlertSettingsSection, IncidentTriggerSection } from './sections/alerting.js';
import { DnsSection } from './sections/network.js';
import { GrpcSection } from './sections/grpc.js';
import { AgenticSection } from './sections/agentic.js';
import { SslSection, TracerouteSection } from './sections/ssl-traceroute.js';
import { TESTABLE_TYPES, TestRunPanel, useTestRun } from './run-before-saving.js';

/** Sends the check: creates it at its type's path, or updates the one of `checkId`. */
function sendCheck(type: CheckType, refs: References, checkId: string | undefined, body: Json) {
  if (checkId === undefined) {
    const path = TYPE_INFO[type as CreatableType].path;
    // The subscriptions shown are the ones wanted: no channel is added on top of them.
    const query = refs.alertChannels ? { autoAssignAlerts: false } : undefined;
    return createCheck(path, body, query);
  }
  return updateCheck(checkId, body);
}

/** The problem a failed send shows: the service's 400 at its field, anything else at the top. */
function problemOf(err: unknown): Problem {
  if (err instanceof ApiError) {
    return { field: err.status === 400 ? (err.field ?? null) : null, message: err.message };
  }
  return { field: null, message: err instanceof Error ? err.message : String(err) };
}

/** Back where the user came from when that was a page of the app; else the link's own address. */
function cancel(event: Event) {
  if (window.history.length > 1 && document.referrer.startsWith(window.location.origin)) {
    event.preventDefault();
    window.history.back();
  }
}

/**
 * Places a new problem at the control that shows its field (known once the form has rendered, from the
 * paths in `shown`), opening Advanced when it is there; then moves the focus to the first invalid control,
 * else to the error at the top.
 */
function useProblemPlacement(
  problem: Problem | null,
  setProblem: (p: Problem) => void,
  shown: { current: Set<string> },
  advancedFields: string[],
  openAdvanced: () => void,
) {
  const formRef = useRef<HTMLFormElement>(null);
  const topErrorRef = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (!problem || problem.at !== undefined) return;
    const at = problem.field === null ? null : controlForField(problem.field, [...shown.current]);
    if (at !== null && (at === 'advanced' || advancedFields.includes(at))) openAdvanced();
    setProblem({ ...problem, at });
  }, [problem]);

  useEffect(() => {
    if (!problem || problem.at === undefined) return;
    const invalid = formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]');
    if (problem.at !== null && invalid) invalid.focus();
    else topErrorRef.current?.focus();
  }, [problem]);
  return { formRef, topErrorRef };
}

/**
 * The body to send, from the form, the tags text, the Advanced JSON and the hidden fields; or the problem
 * that stops it (Advanced not JSON, a required field missing). `cleaned` is the form without blank rows.
 */
function prepareBody(
  type: CheckType,
  form: Json,
  tagsText: string,
  advancedText: string,
  hidden: Json,
): { problem: Problem; cleaned?: Json } | { problem?: undefined; cleaned: Json; body: Json } {
  let advanced: Json;
  try {
    advanced = parseAdvanced(advancedText);
  } catch (err) {
    return { problem: { field: 'advanced', message: (err as Error).message } };
  }
  const cleaned = dropBlankRows(form);
  const missing = missingRequired(type, cleaned);
  if (missing) return { problem: missing, cleaned };
  const body = assembleBody({
    hidden,
    form: 'tags' in cleaned ? { ...cleaned, tags: parseTags(tagsText) } : cleaned,
    advanced,
  });
  return { cleaned, body };
}

/**
 * What the sections use of the form: read and set a field, and the error of a control (noting the paths
 * shown, where a problem may be placed).
 */
function formApi(
  type: CheckType,
  busy: boolean,
  form: Json,
  setForm: (update: (current: Json) => Json) => void,
  problem: Problem | null,
  shown: { current: Set<string> },
): FormApi {
  return {
    type,
    busy,
    get: (path) => getIn(form, path),
    set: (path, value) => setForm((current) => setIn(current, path, value)),
    error: (...paths) => {
      for (const p of paths) shown.current.add(p);
      return problem?.at != null && paths.includes(problem.at) ? problem.message : undefined;
    },
  };
}

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
  // The paths of the controls rendered this time, for placing an error (see Problem.at).
  const shown = useRef<Set<string>>(new Set());
  shown.current = new Set();

  const testRun = useTestRun(type, checkId, (err) => setProblem(problemOf(err)));
  const fx = formApi(type, busy, form, setForm, problem, shown);

  const advancedFields = advancedPaths(advancedText);
  const advancedError = fx.error('advanced', ...advancedFields);
  const { formRef, topErrorRef } = useProblemPlacement(problem, setProblem, shown, advancedFields, () =>
    setAdvancedOpen(true),
  );

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setProblem(null);
    const prepared = prepareBody(type, form, tagsText, advancedText, parts.hidden);
    if (prepared.cleaned && prepared.cleaned !== form) setForm(prepared.cleaned);
    if (prepared.problem) {
      setProblem(prepared.problem);
      return;
    }
    const { body } = prepared;
    setBusy(true);
    try {
      const saved = await sendCheck(type, refs, checkId, body);
      if (creating && type === 'HEARTBEAT' && saved.pingUrl) {
        setBusy(false);
        setCreated(saved);
        return;
      }
      route(`/checks/${encodeURIComponent(saved.id)}`);
    } catch (err) {
      setBusy(false);
      setProblem(problemOf(err));
    }
  };

  /** "Run before saving": the body Save would send, run once as a test run; its problems shown as Save's. */
  const runBeforeSaving = () => {
    if (busy || testRun.busy) return;
    setProblem(null);
    const prepared = prepareBody(type, form, tagsText, advancedText, parts.hidden);
    if (prepared.cleaned && prepared.cleaned !== form) setForm(prepared.cleaned);
    if (prepared.problem) {
      setProblem(prepared.problem);
      return;
    }
    void testRun.start(prepared.body);
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
      <AlertSettingsSection fx={fx} />
      <IncidentTriggerSection fx={fx} refs={refs} />
      <AdvancedJson
        type={type}
        open={advancedOpen}
        onOpen={setAdvancedOpen}
        text={advancedText}
        onText={setAdvancedText}
        error={advancedError}
      />
      <FormActions
        busy={busy}
        checkId={checkId}
        onTestRun={TESTABLE_TYPES.has(type) ? runBeforeSaving : undefined}
        testing={testRun.busy}
      />
      {TESTABLE_TYPES.has(type) ? <TestRunPanel state={testRun.state} /> : null}
    </form>
  );
}

/** Advanced (JSON): the check's fields the form has no control for, as one JSON object. */
function AdvancedJson({
  type,
  open,
  onOpen,
  text,
  onText,
  error: advancedError,
}: {
  type: CheckType;
  open: boolean;
  onOpen: (open: boolean) => void;
  text: string;
  onText: (text: string) => void;
  error: string | undefined;
}) {
  return (
    <details
      class="advanced"
      open={open}
      onToggle={(e) => onOpen((e.currentTarget as HTMLDetailsElement).open)}
    >
      <summary>Advanced (JSON)</summary>
      <div class={advancedError ? 'field field-invalid' : 'field'}>
        <label for="check-advanced">Other fields (JSON)</label>
        <textarea
          id="check-advanced"
          class="code"
          rows={10}
          spellcheck={false}
          value={text}
          aria-describedby={`check-advanced-hint${advancedError ? ' check-advanced-error' : ''}`}
          aria-invalid={advancedError ? 'true' : undefined}
          onInput={(e) => onText(e.currentTarget.value)}
        />
        <p class="field-hint" id="check-advanced-hint">
          The check's fields the form has no control for (for example <code>doubleCheck</code>,{' '}
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
  );
}

/**
 * Submit (Create check / Save changes), "Run before saving" (when `onTestRun` is given: it runs the form once
 * and saves nothing, as its description says) and Cancel.
 */
function FormActions({
  busy,
  checkId,
  onTestRun,
  testing,
}: {
  busy: boolean;
  checkId: string | undefined;
  onTestRun: (() => void) | undefined;
  testing: boolean;
}) {
  const creating = checkId === undefined;
  return (
    <div class="form-actions">
      <button type="submit" disabled={busy}>
        {busy ? 'Saving…' : creating ? 'Create check' : 'Save changes'}
      </button>
      {onTestRun ? (
        <button
          type="button"
          class="button-secondary"
          disabled={busy || testing}
          aria-describedby="check-test-run-hint"
          onClick={onTestRun}
        >
          {testing ? 'Running…' : 'Run before saving'}
        </button>
      ) : null}
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
      {onTestRun ? (
        <p class="field-hint form-actions-hint" id="check-test-run-hint">
          Run before saving runs the form once in one location and saves nothing: no check, no result in its
          history, no alert.
        </p>
      ) : null}
    </div>
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
    case 'GRPC':
      return <GrpcSection fx={fx} />;
    case 'ICMP':
      return <IcmpSection fx={fx} />;
    case 'SSL':
      return <SslSection fx={fx} />;
    case 'TRACEROUTE':
      return <TracerouteSection fx={fx} />;
    case 'BROWSER':
    case 'MULTI_STEP':
      return <ScriptSection fx={fx} refs={refs} />;
    case 'PLAYWRIGHT':
      return <PlaywrightSection fx={fx} refs={refs} />;
    case 'AGENTIC':
      return <AgenticSection fx={fx} refs={refs} />;
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
