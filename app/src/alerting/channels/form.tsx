/**
 * Creating and changing an alert channel: its type, config fields (a saved secret stays masked unless
 * replaced) and switches.
 */
import { useState } from 'preact/hooks';
import { createAlertChannel, updateAlertChannel } from '../../api/alerting.js';
import { FormError, SelectField, TextField } from '../../ui/forms.js';
import type { AlertChannel, AlertChannelType } from '../../api/schemas.js';
import { Checkbox, errorOf, FormButtons, formLevelError } from '../../ui/widgets.js';
import {
  type ChannelKind,
  type ConfigState,
  type KeyValue,
  kindOf,
  TYPE_OPTIONS,
  typeLabel,
  typeOfKind,
} from './describe.js';
import { ConfigFields } from './config-fields.js';

/** The form's config state of a channel (edit) or of a new channel of `type`. */
function initialConfig(channel: AlertChannel | undefined): {
  config: ConfigState;
  headers: KeyValue[];
  queryParameters: KeyValue[];
} {
  const c = (channel?.config ?? {}) as Record<string, unknown>;
  const config: Record<string, string> = {};
  for (const [name, value] of Object.entries(c)) {
    if (typeof value === 'string' || typeof value === 'number') config[name] = String(value);
  }
  const rows = (v: unknown): KeyValue[] =>
    Array.isArray(v) ? (v as KeyValue[]).map((r) => ({ ...r, value: String(r.value ?? '') })) : [];
  return {
    config: config as ConfigState,
    headers: rows(c.headers),
    queryParameters: rows(c.queryParameters),
  };
}

/** The default `url` of a Telegram channel (the Bot API) and of an ntfy channel (the public server). */
export const DEFAULT_URLS: Partial<Record<ChannelKind, string>> = {
  WEBHOOK_TELEGRAM: 'https://api.telegram.org',
  NTFY: 'https://ntfy.sh',
};

/** The `config` body of `kind` from the form's state: empty optional fields left out (or null). */
export function configBody(
  kind: ChannelKind,
  c: ConfigState,
  headers: KeyValue[],
  queryParameters: KeyValue[],
): Record<string, unknown> {
  const v = (name: string) => (c[name] ?? '').trim();
  const optional = (name: string) => (v(name) ? v(name) : null);
  const integer = (name: string) => (v(name) === '' ? null : Number(v(name)));
  const url = () => v('url') || DEFAULT_URLS[kind] || '';
  const rows = (list: KeyValue[]) =>
    list
      .filter((r) => r.key.trim() || r.value)
      .map((r) => ({
        key: r.key.trim(),
        value: r.value,
        ...(r.locked !== undefined ? { locked: r.locked } : {}),
      }));
  switch (kind) {
    case 'EMAIL':
      return { address: v('address') };
    case 'WEBHOOK_MSTEAMS':
    case 'WEBHOOK_DISCORD':
    case 'WEBHOOK_TELEGRAM':
      return {
        name: v('name'),
        url: url(),
        method: 'POST',
        // Rows an API client gave the channel are kept; the form does not show them for these kinds.
        headers: rows(headers),
        queryParameters: rows(queryParameters),
        template: c.template ? c.template : null,
        webhookType: kind,
        ...(kind === 'WEBHOOK_TELEGRAM'
          ? { chatId: optional('chatId'), botToken: optional('botToken') }
          : {}),
      };
    case 'MATTERMOST':
      return { url: v('url'), channel: optional('channel'), username: optional('username') };
    case 'GOOGLE_CHAT':
      return { url: v('url') };
    case 'NTFY':
      return {
        name: v('name'),
        url: url(),
        topic: v('topic'),
        priority: integer('priority'),
        accessToken: optional('accessToken'),
      };
    case 'GOTIFY':
      return { name: v('name'), url: v('url'), token: v('token'), priority: integer('priority') };
    case 'PUSHOVER':
      return {
        name: v('name'),
        apiToken: v('apiToken'),
        userKey: v('userKey'),
        device: optional('device'),
        priority: integer('priority'),
        url: optional('url'),
      };
    case 'MATRIX':
      return {
        name: v('name'),
        homeserverUrl: v('homeserverUrl'),
        roomId: v('roomId'),
        accessToken: v('accessToken'),
      };
    case 'APPRISE':
      return {
        name: v('name'),
        url: v('url'),
        key: optional('key'),
        urls: optional('urls'),
        tag: optional('tag'),
      };
    case 'SLACK':
      return { url: v('url'), channel: optional('channel') };
    case 'WEBHOOK':
      return {
        name: v('name'),
        url: v('url'),
        method: v('method') || 'POST',
        headers: rows(headers),
        queryParameters: rows(queryParameters),
        template: c.template ? c.template : null,
        webhookSecret: optional('webhookSecret'),
        webhookType: optional('webhookType'),
      };
    case 'SMS':
    case 'CALL':
      return { name: v('name'), number: v('number') };
    case 'PAGERDUTY':
      return {
        serviceKey: v('serviceKey'),
        account: optional('account'),
        serviceName: optional('serviceName'),
      };
    case 'OPSGENIE':
      return {
        name: v('name'),
        apiKey: v('apiKey'),
        region: v('region') || 'US',
        priority: v('priority') || 'P3',
      };
  }
}
/**
 * What "Subscribe new checks automatically" (`autoSubscribe`) does, in the form's words (docs/alerting.md,
 * "Who is told"): a check created later is subscribed to the channel even when its creator picks its channels
 * (the check form, or the API with `autoAssignAlerts=false`); checks that exist are not changed.
 */
export const AUTO_SUBSCRIBE_HINT =
  'Every check created from now on alerts here, even when whoever creates it picks its channels (the check form does). Checks that exist now are not changed: subscribe them on the channel’s page.';

/** Which changes a channel hears about, and SSL expiry with its threshold (as typed). */
type Flags = {
  sendFailure: boolean;
  sendDegraded: boolean;
  sendRecovery: boolean;
  sslExpiry: boolean;
  threshold: string;
};

/** The flags of `channel`, or those of a new channel. */
function flagsOf(channel: AlertChannel | undefined): Flags {
  return {
    sendFailure: channel?.sendFailure ?? true,
    sendDegraded: channel?.sendDegraded ?? false,
    sendRecovery: channel?.sendRecovery ?? true,
    sslExpiry: channel?.sslExpiry ?? false,
    threshold: String(channel?.sslExpiryThreshold ?? 30),
  };
}

/**
 * Create (no `channel`) or edit an alert channel: its type, the config the type needs, and the flags (which
 * changes it hears about, SSL expiry and its threshold, whether new checks subscribe to it).
 */
export function ChannelForm({
  channel,
  onSaved,
  onCancel,
}: {
  channel?: AlertChannel;
  onSaved: (channel: AlertChannel) => void;
  onCancel: () => void;
}) {
  const editing = channel !== undefined;
  const initial = initialConfig(channel);
  const [kind, setKind] = useState<ChannelKind>(channel ? kindOf(channel) : 'EMAIL');
  const type: AlertChannelType = typeOfKind(kind);
  const [config, setConfig] = useState<ConfigState>(initial.config);
  const [headers, setHeaders] = useState<KeyValue[]>(initial.headers);
  const [queryParameters, setQueryParameters] = useState<KeyValue[]>(initial.queryParameters);
  const [flags, setFlags] = useState<Flags>(() => flagsOf(channel));
  const [autoSubscribe, setAutoSubscribe] = useState(channel?.autoSubscribe ?? false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const body = {
      type,
      config: configBody(kind, config, headers, queryParameters),
      sendFailure: flags.sendFailure,
      sendDegraded: flags.sendDegraded,
      sendRecovery: flags.sendRecovery,
      sslExpiry: flags.sslExpiry,
      sslExpiryThreshold: Number(flags.threshold),
      autoSubscribe,
    };
    try {
      const saved = channel ? await updateAlertChannel(channel.id, body) : await createAlertChannel(body);
      onSaved(saved);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const headingId = editing ? 'ac-edit' : 'ac-new';
  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby={headingId}>
      <h2 id={headingId}>{editing ? 'Edit the channel' : 'New alert channel'}</h2>
      <SelectField
        label="Type"
        error={errorOf(error, 'type')}
        hint={editing ? 'Changing the type needs the new type’s settings.' : undefined}
        value={kind}
        onValue={setKind}
        options={TYPE_OPTIONS}
      />
      <fieldset>
        <legend>{typeLabel(kind)} settings</legend>
        <ConfigFields
          kind={kind}
          config={config}
          headers={headers}
          queryParameters={queryParameters}
          editing={channel !== undefined && kindOf(channel) === kind}
          error={error}
          onConfig={(name, value) => setConfig({ ...config, [name]: value } as ConfigState)}
          onHeaders={setHeaders}
          onQueryParameters={setQueryParameters}
        />
      </fieldset>
      <FlagsFieldset flags={flags} onFlags={setFlags} error={error} />
      <Checkbox
        label="Subscribe new checks automatically"
        checked={autoSubscribe}
        onChange={setAutoSubscribe}
        hint={AUTO_SUBSCRIBE_HINT}
      />
      <FormError error={formLevelError(error, ['type', 'config', 'sslExpiryThreshold'])} />
      <FormButtons label={editing ? 'Save' : 'Create alert channel'} busy={busy} onCancel={onCancel} />
    </form>
  );
}

/** What the channel is told about: failures, degradations, recoveries and SSL expiry (with its days). */
function FlagsFieldset({
  flags,
  onFlags,
  error,
}: {
  flags: Flags;
  onFlags: (flags: Flags) => void;
  error: unknown;
}) {
  const set =
    <K extends keyof Flags>(name: K) =>
    (value: Flags[K]) =>
      onFlags({ ...flags, [name]: value });
  return (
    <fieldset>
      <legend>What it is told about</legend>
      <Checkbox label="Failures" checked={flags.sendFailure} onChange={set('sendFailure')} />
      <Checkbox label="Degradations" checked={flags.sendDegraded} onChange={set('sendDegraded')} />
      <Checkbox
        label="Recoveries"
        checked={flags.sendRecovery}
        onChange={set('sendRecovery')}
        hint="Only for episodes whose failure (or degradation) this channel was told about."
      />
      <Checkbox
        label="SSL certificates about to expire"
        checked={flags.sslExpiry}
        onChange={set('sslExpiry')}
      />
      {flags.sslExpiry ? (
        <TextField
          label="Days before expiry"
          hint="1 to 30 days."
          error={errorOf(error, 'sslExpiryThreshold')}
          type="number"
          min={1}
          max={30}
          class="misc-narrow"
          value={flags.threshold}
          onValue={set('threshold')}
        />
      ) : null}
    </fieldset>
  );
}
