/**
 * The alert channels a check notifies (`alertChannelSubscriptions`).
 */
import type { FormApi } from '../controls/inputs.js';
import type { References } from './general.js';

/** What a channel is called in the list: its type and what tells it apart. */
function channelLabel(channel: { id: number; type: string; config: Record<string, unknown> }): string {
  const c = channel.config;
  const name = [c.name, c.address, c.channel, c.serviceName, c.number].find(
    (v) => typeof v === 'string' && v !== '',
  );
  const kind = channel.type.charAt(0) + channel.type.slice(1).toLowerCase();
  return `${kind}: ${typeof name === 'string' ? name : `#${channel.id}`}`;
}

/**
 * `alertChannelSubscriptions` as one checkbox per alert channel of the account. A subscription to a channel
 * not listed (deleted since) is kept as it is.
 */
export function AlertChannelSection({
  fx,
  refs,
  creating,
}: {
  fx: FormApi;
  refs: References;
  creating: boolean;
}) {
  const channels = refs.alertChannels;
  const error = fx.error('alertChannelSubscriptions');
  if (!channels) {
    return (
      <fieldset>
        <legend>Alert channels</legend>
        <p class="notice">
          Alert channels could not be loaded;{' '}
          {creating ? 'the new check is subscribed to every channel.' : 'the check keeps its subscriptions.'}
        </p>
      </fieldset>
    );
  }
  const subscriptions =
    (fx.get('alertChannelSubscriptions') as { alertChannelId: number; activated: boolean }[]) ?? [];
  const isOn = (id: number) => subscriptions.some((s) => s.alertChannelId === id && s.activated);
  const toggle = (id: number, on: boolean) => {
    const known = subscriptions.some((s) => s.alertChannelId === id);
    fx.set(
      'alertChannelSubscriptions',
      known
        ? subscriptions.map((s) => (s.alertChannelId === id ? { ...s, activated: on } : s))
        : [...subscriptions, { alertChannelId: id, activated: on }],
    );
  };
  return (
    <fieldset aria-describedby="alert-channels-hint">
      <legend>Alert channels</legend>
      <p class="field-hint" id="alert-channels-hint">
        Where notifications about this check go. A channel can also alert for it through its group.
      </p>
      {error ? (
        <p class="field-error" role="alert">
          <span aria-hidden="true">✕ </span>
          {error}
        </p>
      ) : null}
      {channels.length === 0 ? (
        <p class="muted">
          No alert channels yet: <a href="/alert-channels">add one</a>.
        </p>
      ) : (
        <ul class="check-grid">
          {channels.map((c, i) => (
            <li key={c.id}>
              <input
                id={`alert-channel-${c.id}`}
                type="checkbox"
                checked={isOn(c.id)}
                aria-invalid={error && i === 0 ? 'true' : undefined}
                onChange={(e) => toggle(c.id, e.currentTarget.checked)}
              />
              <label for={`alert-channel-${c.id}`}>{channelLabel(c)}</label>
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}
