/**
 * The check page's actions that change the check: pause / resume, mute / unmute, and delete.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { deleteCheck, updateCheck } from '../../api/checks.js';
import type { Check } from '../../api/schemas.js';

/**
 * Pause / resume and mute / unmute: `PUT /v1/checks/{id}` with the one field changed. The fields sent
 * replace the stored ones and the others are kept, but `heartbeat` and `script` are required in every
 * update body, so they are sent back as they are (docs/api.md, "Checks").
 */
export function CheckToggles({
  check,
  onDone,
}: {
  check: Check;
  /** Told what happened, in a sentence for the status line, and whether it was an error. */
  onDone: (text: string, error: boolean) => void;
}) {
  const [busy, setBusy] = useState(false);

  async function toggle(field: 'activated' | 'muted') {
    setBusy(true);
    const value = !check[field];
    try {
      await updateCheck(check.id, {
        heartbeat: (check.heartbeat as Record<string, unknown> | undefined) ?? {},
        script: typeof check.script === 'string' ? check.script : null,
        [field]: value,
      });
      onDone(
        field === 'activated'
          ? value
            ? 'The check is scheduled again.'
            : 'The check is paused: it is not scheduled (Run now still runs it).'
          : value
            ? 'The check is muted: its alerts are recorded and nobody is notified.'
            : 'The check is unmuted: its alerts are sent again.',
        false,
      );
    } catch (err) {
      const what = field === 'activated' ? (value ? 'resumed' : 'paused') : value ? 'muted' : 'unmuted';
      onDone(`The check could not be ${what}: ${err instanceof Error ? err.message : String(err)}`, true);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <button type="button" class="button-secondary" disabled={busy} onClick={() => toggle('activated')}>
        {check.activated ? 'Pause' : 'Resume'}
      </button>
      <button type="button" class="button-secondary" disabled={busy} onClick={() => toggle('muted')}>
        {check.muted ? 'Unmute' : 'Mute'}
      </button>
    </>
  );
}

/** Delete with a native modal dialog: focus moves into it (on Cancel), Escape closes it, focus comes back. */
export function DeleteCheck({ check, onDeleted }: { check: Check; onDeleted: () => void }) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const triggerRef = useRef<HTMLButtonElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    const onClose = () => triggerRef.current?.focus();
    dialog.addEventListener('close', onClose);
    return () => dialog.removeEventListener('close', onClose);
  }, []);

  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      await deleteCheck(check.id);
      dialogRef.current?.close();
      onDeleted();
    } catch (err) {
      setError(err instanceof Error ? err : new Error(String(err)));
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <button
        type="button"
        class="button-danger"
        ref={triggerRef}
        onClick={() => {
          setError(null);
          dialogRef.current?.showModal();
          cancelRef.current?.focus();
        }}
      >
        Delete
      </button>
      <dialog ref={dialogRef} class="check-delete-dialog" aria-labelledby="check-delete-title">
        <h2 id="check-delete-title">Delete “{check.name}”?</h2>
        <p>The check stops running and its queued jobs are dropped. This cannot be undone.</p>
        {error ? (
          <p class="check-action-error" role="alert">
            ✕ {error.message}
          </p>
        ) : null}
        <div class="check-dialog-buttons">
          <button type="button" class="button-danger" disabled={busy} onClick={confirm}>
            {busy ? 'Deleting…' : 'Delete check'}
          </button>
          <button
            type="button"
            class="button-secondary"
            ref={cancelRef}
            disabled={busy}
            onClick={() => dialogRef.current?.close()}
          >
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}
