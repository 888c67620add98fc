/**
 * The check page of an AGENTIC check: its goal, the stored script (read-only, with an Edit that saves a new
 * version) and its script changes (docs/api.md, "Agentic checks"): each with its reason and diff, and Apply or
 * Reject for a repair waiting for review.
 */
import { useState } from 'preact/hooks';
import { decideRepair, listRepairs } from '../../api/agentic.js';
import { updateCheck } from '../../api/checks.js';
import type { AgenticRepair, Check } from '../../api/schemas.js';
import { formatDateTime } from '../../ui/format.js';
import { TextAreaField } from '../../ui/forms.js';
import { useLoad } from '../../ui/hooks.js';
import { Empty, ErrorNotice, Loading } from '../../ui/page.js';
import { DiffView } from '../../results/agentic.js';
import { ScrollRegion } from '../../results/text.js';
import './agentic.css';

/** How often the repairs are read again while the page is open, ms (a run may add one). */
const REPAIRS_REFRESH_MS = 30_000;

/** A repair's status in words. */
const STATUS_TEXT: Record<AgenticRepair['status'], string> = {
  APPLIED: 'Applied',
  PENDING: 'Waiting for review',
  REJECTED: 'Rejected',
  STALE: 'Stale: the script moved',
};

/** The goal, and the stored script with its version: read-only, or an editor that saves a new version. */
export function AgenticScriptPanel({
  check,
  canWrite,
  onSaved,
}: {
  check: Check;
  canWrite: boolean;
  onSaved: () => void;
}) {
  const script = typeof check.script === 'string' && check.script !== '' ? check.script : null;
  const version = typeof check.scriptVersion === 'number' ? check.scriptVersion : 0;
  const [editing, setEditing] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const save = async (event: Event) => {
    event.preventDefault();
    if (editing === null || busy) return;
    setBusy(true);
    setError(null);
    try {
      await updateCheck(check.id, { script: editing });
      setEditing(null);
      onSaved();
    } catch (err) {
      setError(err instanceof Error ? err : new Error(String(err)));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="agentic-script-heading" class="agentic-panel card">
      <h2 id="agentic-script-heading">Goal and script</h2>
      <h3 class="agentic-label">Prompt</h3>
      <p class="agentic-prompt">{typeof check.prompt === 'string' ? check.prompt : ''}</p>
      <div class="agentic-script-header">
        <h3 class="agentic-label">
          Script{' '}
          <span class="muted">
            {script === null ? '(none yet)' : `version ${version}`} ·{' '}
            {check.repairMode === 'REVIEW' ? 'repairs reviewed first' : 'repairs applied automatically'}
          </span>
        </h3>
        {canWrite && editing === null ? (
          <button type="button" class="button-secondary" onClick={() => setEditing(script ?? '')}>
            Edit script
          </button>
        ) : null}
      </div>
      {editing !== null ? (
        <form onSubmit={save} class="agentic-edit">
          <TextAreaField
            label="Script"
            hint={`A browser-check script (page, expect). Saving stores it as version ${version + 1}; the runs replay it from then on.`}
            error={error?.message}
            rows={16}
            class="code"
            spellcheck={false}
            value={editing}
            onValue={setEditing}
          />
          <div class="form-actions">
            <button type="submit" disabled={busy}>
              {busy ? 'Saving…' : 'Save script'}
            </button>
            <button
              type="button"
              class="button-secondary"
              onClick={() => {
                setEditing(null);
                setError(null);
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : script === null ? (
        <p class="muted">No script yet: the next run writes one from the prompt.</p>
      ) : (
        <ScrollRegion label={`Script, version ${version}`}>
          <pre class="agentic-script">
            <code>{script}</code>
          </pre>
        </ScrollRegion>
      )}
    </section>
  );
}

/** The check's script changes, newest first, with Apply and Reject for the pending ones. */
export function AgenticRepairs({
  checkId,
  canWrite,
  reloadKey,
  onDecided,
}: {
  checkId: string;
  canWrite: boolean;
  reloadKey: number;
  onDecided: () => void;
}) {
  const loaded = useLoad((signal) => listRepairs(checkId, signal), [checkId, reloadKey], REPAIRS_REFRESH_MS);
  const [busy, setBusy] = useState<string | null>(null);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  if (loaded.error && !loaded.data) {
    return <ErrorNotice error={loaded.error} title="The script changes could not be loaded" />;
  }
  if (!loaded.data) return <Loading what="Loading the script changes" />;
  const decide = async (repair: AgenticRepair, decision: 'apply' | 'reject') => {
    setBusy(repair.id);
    setMessage(null);
    try {
      const decided = await decideRepair(checkId, repair.id, decision);
      setMessage({
        text:
          decision === 'apply'
            ? `Applied: the script is now version ${decided.newVersion}.`
            : 'Rejected: the script stays as it is.',
        error: false,
      });
      loaded.reload();
      onDecided();
    } catch (err) {
      setMessage({ text: err instanceof Error ? err.message : String(err), error: true });
      loaded.reload();
    } finally {
      setBusy(null);
    }
  };
  return (
    <>
      <p
        class={message?.error ? 'check-action-message check-action-error' : 'check-action-message'}
        role="status"
      >
        {message ? `${message.error ? '✕ ' : ''}${message.text}` : ''}
      </p>
      {loaded.data.length === 0 ? (
        <Empty>
          No script change yet: the first run writes the script, later runs repair it when it breaks.
        </Empty>
      ) : (
        <ol class="agentic-repairs">
          {loaded.data.map((r) => (
            <li key={r.id} class="agentic-repair card">
              <div class="agentic-repair-head">
                <span class={`agentic-status agentic-status-${r.status.toLowerCase()}`}>
                  {STATUS_TEXT[r.status]}
                </span>
                <strong>{r.kind === 'GENERATED' ? 'Script written' : 'Repair'}</strong>
                <span class="muted">
                  {r.baseVersion === 0 ? 'over no script' : `over v${r.baseVersion}`}
                  {r.newVersion !== null ? ` → v${r.newVersion}` : ''} ·{' '}
                  <time dateTime={r.createdAt}>{formatDateTime(r.createdAt)}</time>
                </span>
              </div>
              <p class="agentic-reason">{r.reason}</p>
              {r.decidedAt && r.status !== 'PENDING' ? (
                <p class="muted agentic-decided">
                  {r.decidedBy
                    ? `${r.status === 'REJECTED' ? 'Rejected' : 'Applied'} by ${r.decidedBy.name ?? r.decidedBy.id}`
                    : r.status === 'STALE'
                      ? 'Not applied: another version was stored first'
                      : 'Applied by the check’s repair mode'}{' '}
                  · <time dateTime={r.decidedAt}>{formatDateTime(r.decidedAt)}</time>
                </p>
              ) : null}
              <details class="rv-details agentic-diff">
                <summary>Diff</summary>
                <DiffView
                  diff={r.diff}
                  label={`Diff of the ${r.kind === 'GENERATED' ? 'script written' : 'repair'}`}
                />
              </details>
              {canWrite && r.status === 'PENDING' ? (
                <div class="agentic-repair-actions">
                  <button type="button" disabled={busy !== null} onClick={() => void decide(r, 'apply')}>
                    {busy === r.id ? 'Working…' : 'Apply'} <span class="visually-hidden">this repair</span>
                  </button>
                  <button
                    type="button"
                    class="button-secondary"
                    disabled={busy !== null}
                    onClick={() => void decide(r, 'reject')}
                  >
                    Reject <span class="visually-hidden">this repair</span>
                  </button>
                </div>
              ) : null}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}
