/**
 * Which checks and check groups alert through a channel (`subscriptions` of `PUT /v1/alert-channels/{id}`).
 */
import { useState } from 'preact/hooks';
import { updateAlertChannel } from '../../api/alerting.js';
import { listCheckGroups } from '../../api/check-groups.js';
import { listChecks } from '../../api/checks.js';
import { FormError } from '../../ui/forms.js';
import type { AlertChannel, Check, CheckGroup } from '../../api/schemas.js';
import { Checkbox, FormButtons } from '../../ui/widgets.js';
import { Empty, ErrorNotice } from '../../ui/page.js';
import { useLoad } from '../../ui/hooks.js';
import { useCan } from '../../ui/permissions.js';

type Subscription = AlertChannel['subscriptions'][number];

/** A subscription's key in the form: `c:` and a check id, or `g:` and a group id. */
const keyOf = (s: { checkId?: string; groupId?: number }) =>
  s.checkId !== undefined ? `c:${s.checkId}` : `g:${s.groupId}`;

/**
 * The subscriptions to save: the checked ones, activated, then the deactivated ones left unchecked (they
 * stay as they were).
 */
function subscriptionsOf(checked: Set<string>, current: Subscription[]) {
  const kept = current.filter((s) => !s.activated && !checked.has(keyOf(s)));
  return [
    ...[...checked].map((k) =>
      k.startsWith('c:')
        ? { checkId: k.slice(2), activated: true }
        : { groupId: Number(k.slice(2)), activated: true },
    ),
    ...kept,
  ];
}

/** The checks and check groups subscribed to a channel, editable as one list of checkboxes. */
export function Subscriptions({ channel, onSaved }: { channel: AlertChannel; onSaved: () => void }) {
  const targets = useLoad(async (signal) => {
    const [checks, groups] = await Promise.all([listChecks(signal), listCheckGroups(signal)]);
    return { checks, groups };
  }, []);
  const [editing, setEditing] = useState(false);
  const canWrite = useCan('write');
  const [checked, setChecked] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const active = channel.subscriptions.filter((s) => s.activated);

  function startEditing() {
    setChecked(new Set(active.map(keyOf)));
    setError(null);
    setEditing(true);
  }

  async function save(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const subscriptions = subscriptionsOf(checked, channel.subscriptions);
    try {
      await updateAlertChannel(channel.id, { subscriptions });
      setEditing(false);
      onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const toggle = (k: string, on: boolean) => {
    const next = new Set(checked);
    if (on) next.add(k);
    else next.delete(k);
    setChecked(next);
  };

  return (
    <section aria-labelledby="ac-subs">
      <div class="misc-section-head">
        <h2 id="ac-subs">Subscriptions</h2>
        {!editing && canWrite ? (
          <button type="button" class="button-secondary" onClick={startEditing} disabled={!targets.data}>
            Change subscriptions
          </button>
        ) : null}
      </div>
      {targets.error ? <ErrorNotice error={targets.error} /> : null}{' '}
      {!editing || !canWrite ? (
        <SubscriptionList channel={channel} active={active} targets={targets.data} />
      ) : (
        <form class="card misc-form" onSubmit={save} noValidate aria-labelledby="ac-subs-edit">
          <h3 id="ac-subs-edit">Checks and groups that alert here</h3>
          <SubscriptionPicker targets={targets.data} checked={checked} onToggle={toggle} />
          <FormError error={error} />
          <FormButtons label="Save subscriptions" busy={busy} onCancel={() => setEditing(false)} />
        </form>
      )}
    </section>
  );
}

/** The channel's subscriptions, each naming its check or group. */
function SubscriptionList({
  channel,
  active,
  targets,
}: {
  channel: AlertChannel;
  active: Subscription[];
  targets: { checks: Check[]; groups: CheckGroup[] } | undefined;
}) {
  const checkName = new Map((targets?.checks ?? []).map((c) => [c.id, c.name]));
  const groupName = new Map((targets?.groups ?? []).map((g) => [g.id, g.name]));
  return (
    <>
      {active.length === 0 ? (
        <Empty>
          No check or check group is subscribed{channel.autoSubscribe ? ' yet (new checks will be)' : ''}. Use{' '}
          <strong>Change subscriptions</strong> to pick the checks and groups that alert here.
        </Empty>
      ) : null}
      {channel.subscriptions.length > 0 ? (
        <ul class="ac-plain-list">
          {channel.subscriptions.map((s) => (
            <li key={keyOf(s)}>
              {s.checkId !== undefined ? (
                <>
                  Check{' '}
                  <a href={`/checks/${encodeURIComponent(s.checkId)}`}>
                    {checkName.get(s.checkId) ?? s.checkId}
                  </a>
                </>
              ) : (
                <>
                  Check group{' '}
                  <a href={`/check-groups/${s.groupId}`}>
                    {groupName.get(s.groupId ?? 0) ?? `#${s.groupId}`}
                  </a>{' '}
                  (all its checks)
                </>
              )}
              {s.activated ? null : <span class="muted"> (deactivated: it alerts nobody here)</span>}
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}

/** A checkbox per check group and per check. */
function SubscriptionPicker({
  targets,
  checked,
  onToggle: toggle,
}: {
  targets: { checks: Check[]; groups: CheckGroup[] } | undefined;
  checked: Set<string>;
  onToggle: (key: string, on: boolean) => void;
}) {
  return (
    <>
      <fieldset class="ac-pick">
        <legend>Check groups</legend>
        {(targets?.groups ?? []).length === 0 ? <p class="muted">No check group.</p> : null}
        {(targets?.groups ?? []).map((g) => (
          <Checkbox
            key={g.id}
            label={g.name}
            checked={checked.has(`g:${g.id}`)}
            onChange={(on) => toggle(`g:${g.id}`, on)}
          />
        ))}
      </fieldset>
      <fieldset class="ac-pick">
        <legend>Checks</legend>
        {(targets?.checks ?? []).length === 0 ? <p class="muted">No check.</p> : null}
        {(targets?.checks ?? []).map((c) => (
          <Checkbox
            key={c.id}
            label={`${c.name} (${c.checkType})`}
            checked={checked.has(`c:${c.id}`)}
            onChange={(on) => toggle(`c:${c.id}`, on)}
          />
        ))}
      </fieldset>
    </>
  );
}
