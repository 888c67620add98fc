import type { ComponentChildren } from 'preact';
import { useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import type { Loaded } from './hooks.js';
import { Empty, ErrorNotice, Loading } from './page.js';
import './widgets.css';

/**
 * Pieces shared by the account pages (private locations, agents, alert channels, check groups, incidents,
 * status pages): breadcrumbs, a confirmed destructive action, a secret shown once, yes/no badges, a form's
 * button row, what a list shows before its rows, and the mapping of an API error to the field of a form it
 * belongs to.
 */

/** A trail of links above a detail page's heading; the last item is the page itself (not a link). */
export function Breadcrumbs({ items }: { items: readonly { href?: string; label: ComponentChildren }[] }) {
  return (
    <nav aria-label="Breadcrumb" class="breadcrumbs">
      <ol class="misc-breadcrumbs">
        {items.map((item, i) => (
          <li key={i}>
            {item.href ? <a href={item.href}>{item.label}</a> : <span aria-current="page">{item.label}</span>}
          </li>
        ))}
      </ol>
    </nav>
  );
}

/**
 * Whether the API error `error` concerns the body field `name`: its `attributes.field` is `name` or a path
 * inside it (`name.x`, `name[0]`).
 */
function isErrorOf(error: unknown, name: string): boolean {
  if (!(error instanceof ApiError) || !error.field) return false;
  const field = error.field;
  return field === name || field.startsWith(`${name}.`) || field.startsWith(`${name}[`);
}

/** The message to show next to the field `name` of a form when `error` concerns it, else undefined. */
export function errorOf(error: unknown, name: string): string | undefined {
  return isErrorOf(error, name) ? (error as ApiError).message : undefined;
}

/**
 * The error to show above a form's buttons: `error` unless it concerns one of `fields`, which show it
 * themselves next to the control.
 */
export function formLevelError(error: unknown, fields: readonly string[]): unknown {
  if (!error) return null;
  return fields.some((f) => isErrorOf(error, f)) ? null : error;
}

/**
 * A slug suggested from a name (a private location's slug, a status page's url): a DNS label of at most 63
 * characters: lower case, accents dropped, runs of other characters as one hyphen, none at either end
 * (`"Berlin Office (2)"` → `"berlin-office-2"`).
 */
export function slugOf(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

/** Comma-separated text as a list: items trimmed, empty ones left out (`"a, b,,c"` → `["a","b","c"]`). */
export function parseList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** The message of anything thrown, for a notice. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A destructive action that asks first: the button opens an inline question with the confirming button and
 * Cancel (focus moves to Cancel, Escape cancels, focus returns to the button). An error of `onConfirm`
 * (such as a 409 naming what still uses the thing) is shown in the question, which stays open.
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  onConfirm,
  describeError = messageOf,
  small = false,
}: {
  /** The text of the button that opens the question, e.g. "Delete location". */
  label: ComponentChildren;
  /** What is about to happen, e.g. "Delete “Berlin office”? Its keys stop working at once." */
  question: ComponentChildren;
  /** The text of the confirming button, e.g. "Delete". */
  confirmLabel: string;
  /** The action; its rejection is shown and the question stays open. */
  onConfirm: () => Promise<void>;
  /** Words for a rejection (e.g. a 409 naming what still uses the thing); default: the error's message. */
  describeError?: (error: unknown) => ComponentChildren;
  small?: boolean;
}) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const triggerRef = useRef<HTMLButtonElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);

  // A layout effect: focus moves in the same task as the click, before a key press can land on <body>.
  useLayoutEffect(() => {
    if (open) cancelRef.current?.focus();
    else if (wasOpen.current) triggerRef.current?.focus();
    wasOpen.current = open;
  }, [open]);

  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      setOpen(false);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const cls = small ? 'button-danger misc-small' : 'button-danger';
  if (!open) {
    return (
      <button
        type="button"
        class={cls}
        ref={triggerRef}
        onClick={() => {
          setError(null);
          setOpen(true);
        }}
      >
        {label}
      </button>
    );
  }
  return (
    <fieldset
      class="misc-confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape' && !busy) setOpen(false);
      }}
    >
      <legend>{question}</legend>
      {error ? (
        <p class="misc-confirm-error" role="alert">
          <span aria-hidden="true">✕ </span>
          {describeError(error)}
        </p>
      ) : null}
      <div class="misc-buttons">
        <button type="button" class="button-danger" disabled={busy} onClick={confirm}>
          {busy ? 'Working…' : confirmLabel}
        </button>
        <button
          type="button"
          class="button-secondary"
          ref={cancelRef}
          disabled={busy}
          onClick={() => setOpen(false)}
        >
          Cancel
        </button>
      </div>
    </fieldset>
  );
}

/**
 * A secret the API answers once (a private-location key, a status page's access key): shown in a notice
 * with a copy button and the sentence that it will not be shown again. It lives only in the page's memory:
 * never in the URL or browser storage; dismissing it forgets it.
 */
export function OneTimeSecret({
  title,
  secret,
  label,
  children,
  onDismiss,
}: {
  title: ComponentChildren;
  secret: string;
  /** The accessible name of the read-only field holding the secret, e.g. "New key". */
  label: string;
  /** More to say (how to use it), after the warning. */
  children?: ComponentChildren;
  onDismiss: () => void;
}) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const boxRef = useRef<HTMLElement>(null);
  const id = useId();

  useEffect(() => {
    boxRef.current?.focus();
  }, []);

  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      // No clipboard permission (or not a secure context): select it for Ctrl+C.
      inputRef.current?.select();
      setCopied('failed');
    }
  }

  return (
    <section class="notice notice-ok misc-secret" tabIndex={-1} ref={boxRef} aria-labelledby={`${id}-t`}>
      <strong id={`${id}-t`}>{title}</strong>
      <p>
        <strong>Copy it now: it will not be shown again.</strong> Outpost stores only its hash.
      </p>
      <div class="misc-secret-row">
        <label class="visually-hidden" for={`${id}-v`}>
          {label}
        </label>
        <input
          id={`${id}-v`}
          ref={inputRef}
          class="misc-secret-value"
          type="text"
          readOnly
          value={secret}
          spellcheck={false}
          autoComplete="off"
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" class="button-secondary" onClick={onDismiss}>
          Done
        </button>
      </div>
      <p aria-live="polite" class="muted">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'failed'
            ? 'The browser did not allow copying: the key is selected, press Ctrl+C (⌘C).'
            : ''}
      </p>
      {children}
    </section>
  );
}

/** A yes/no value as a badge with a glyph: "✓ Yes" or "– No" (or the given words). */
export function YesNo({ value, yes = 'Yes', no = 'No' }: { value: boolean; yes?: string; no?: string }) {
  return value ? (
    <span class="badge badge-passing">
      <span aria-hidden="true" class="badge-glyph">
        ✓
      </span>
      {yes}
    </span>
  ) : (
    <span class="badge badge-paused">
      <span aria-hidden="true" class="badge-glyph">
        –
      </span>
      {no}
    </span>
  );
}

/** A labelled checkbox (the label after the box, the whole row clickable), with an optional hint. */
export function Checkbox({
  label,
  checked,
  onChange,
  hint,
  disabled = false,
}: {
  label: ComponentChildren;
  checked: boolean;
  onChange: (checked: boolean) => void;
  hint?: ComponentChildren;
  disabled?: boolean;
}) {
  const id = useId();
  return (
    <div class="misc-checkbox">
      <input
        id={id}
        type="checkbox"
        checked={checked}
        disabled={disabled}
        aria-describedby={hint ? `${id}-hint` : undefined}
        onChange={(e) => onChange(e.currentTarget.checked)}
      />
      <label for={id}>{label}</label>
      {hint ? (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}

/**
 * A form's button row: the submit button (disabled and saying `busyLabel` while `busy`), then Cancel when
 * there is `onCancel`, then a polite status when there is `status` (e.g. "Saved." after a save; an empty
 * string keeps the live region in place so the next message is read out).
 */
export function FormButtons({
  label,
  busy,
  busyLabel = 'Saving…',
  onCancel,
  status,
  small = false,
}: {
  /** The submit button's text, e.g. "Save" or "Create private location". */
  label: string;
  /** True while the form is being sent. */
  busy: boolean;
  /** The submit button's text while `busy`; default "Saving…". */
  busyLabel?: string;
  /** Closes the form without sending it; none: no Cancel button. */
  onCancel?: () => void;
  /** The text of the status after the buttons; undefined: none. */
  status?: string;
  /** The small buttons of a table row. */
  small?: boolean;
}) {
  return (
    <div class="misc-buttons">
      <button type="submit" class={small ? 'misc-small' : undefined} disabled={busy}>
        {busy ? busyLabel : label}
      </button>
      {onCancel ? (
        <button
          type="button"
          class={small ? 'button-secondary misc-small' : 'button-secondary'}
          onClick={onCancel}
        >
          Cancel
        </button>
      ) : null}
      {status === undefined ? null : (
        <span role="status" class="muted">
          {status}
        </span>
      )}
    </div>
  );
}

/**
 * What a list shows before (or instead of) its rows, from its {@link Loaded} state: the error of a first
 * load that failed (a failed poll keeps the rows and says nothing here), `loading` while the first load
 * runs, and `children` (what to say about an empty list) once loaded when `isEmpty`. Renders nothing once
 * there are rows to show.
 */
export function ListStatus({
  load,
  loading,
  isEmpty,
  children,
}: {
  load: Pick<Loaded<unknown>, 'data' | 'error'>;
  /** The loading message without its ellipsis, e.g. "Loading agents". */
  loading: string;
  /** Whether the loaded list has nothing to show (read only once `load.data` is there). */
  isEmpty: boolean;
  /** What to say about an empty list, with what to do about it. */
  children: ComponentChildren;
}) {
  if (load.error && !load.data) return <ErrorNotice error={load.error} />;
  if (!load.data) return <Loading what={loading} />;
  return isEmpty ? <Empty>{children}</Empty> : null;
}
