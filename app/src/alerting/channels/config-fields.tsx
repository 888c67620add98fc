/**
 * The fields of an alert channel's `config`, per type.
 */
import { SelectField, TextAreaField, TextField } from '../../ui/forms.js';
import { errorOf } from '../../ui/widgets.js';
import { type ChannelKind, type ConfigState, type KeyValue, MASK } from './describe.js';

/** A text input of the config, wired to its `config.<name>` error. */
function ConfigInput({
  name,
  label,
  hint,
  type = 'text',
  required = false,
  config,
  error,
  onChange,
  autoComplete,
}: {
  name: string;
  label: string;
  hint?: string | undefined;
  type?: 'text' | 'email' | 'url' | 'tel' | 'password' | 'number';
  required?: boolean;
  config: ConfigState;
  error: unknown;
  onChange: (name: string, value: string) => void;
  autoComplete?: string;
}) {
  return (
    <TextField
      label={required ? label : `${label} (optional)`}
      hint={hint}
      error={errorOf(error, `config.${name}`)}
      type={type}
      required={required}
      value={config[name] ?? ''}
      spellcheck={false}
      autoComplete={autoComplete ?? 'off'}
      onValue={(value) => onChange(name, value)}
    />
  );
}

/** A config select of fixed choices. */
function ConfigSelect({
  name,
  label,
  choices,
  fallback,
  config,
  error,
  onChange,
}: {
  name: string;
  label: string;
  choices: readonly { value: string; label: string }[];
  fallback: string;
  config: ConfigState;
  error: unknown;
  onChange: (name: string, value: string) => void;
}) {
  return (
    <SelectField
      label={label}
      error={errorOf(error, `config.${name}`)}
      value={config[name] || fallback}
      onValue={(value) => onChange(name, value)}
      options={choices}
    />
  );
}

/** Rows of key and value (webhook headers or query parameters), each removable, and a button to add one. */
export function KeyValueRows({
  legend,
  name,
  rows,
  onChange,
  error,
}: {
  legend: string;
  name: string;
  rows: KeyValue[];
  onChange: (rows: KeyValue[]) => void;
  error: unknown;
}) {
  const message = errorOf(error, `config.${name}`);
  const set = (i: number, patch: Partial<KeyValue>) =>
    onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const singular = name === 'headers' ? 'header' : 'query parameter';
  return (
    <fieldset class="ac-rows">
      <legend>{legend}</legend>
      {rows.length === 0 ? <p class="muted ac-rows-empty">None.</p> : null}
      {rows.map((row, i) => (
        <div class="ac-row" key={i}>
          <label>
            <span class="visually-hidden">
              Name of {singular} {i + 1}
            </span>
            <input
              type="text"
              placeholder="Name"
              value={row.key}
              spellcheck={false}
              onInput={(e) => set(i, { key: e.currentTarget.value })}
            />
          </label>
          <label>
            <span class="visually-hidden">
              Value of {singular} {i + 1}
            </span>
            <input
              type="text"
              placeholder="Value"
              value={row.value}
              spellcheck={false}
              onInput={(e) => set(i, { value: e.currentTarget.value })}
            />
          </label>
          <button
            type="button"
            class="button-secondary misc-small"
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          >
            Remove
            <span class="visually-hidden">
              {' '}
              {singular} {i + 1}
            </span>
          </button>
        </div>
      ))}
      {message ? (
        <p class="field-error" role="alert">
          <span aria-hidden="true">✕ </span>
          {message}
        </p>
      ) : null}
      <button
        type="button"
        class="button-secondary misc-small"
        onClick={() => onChange([...rows, { key: '', value: '' }])}
      >
        Add {singular}
      </button>
    </fieldset>
  );
}
/** What every config control of a channel type takes. */
type Common = { config: ConfigState; error: unknown; onChange: (name: string, value: string) => void };

/** The config fields of a channel kind (a channel type, or a WEBHOOK preset). */
export function ConfigFields({
  kind,
  config,
  headers,
  queryParameters,
  editing,
  error,
  onConfig,
  onHeaders,
  onQueryParameters,
}: {
  kind: ChannelKind;
  config: ConfigState;
  headers: KeyValue[];
  queryParameters: KeyValue[];
  editing: boolean;
  error: unknown;
  onConfig: (name: string, value: string) => void;
  onHeaders: (rows: KeyValue[]) => void;
  onQueryParameters: (rows: KeyValue[]) => void;
}) {
  const common = { config, error, onChange: onConfig };
  const secretHint = editing ? `The stored secret reads ${MASK}: leave it to keep it.` : undefined;
  switch (kind) {
    case 'WEBHOOK_MSTEAMS':
    case 'WEBHOOK_DISCORD':
    case 'WEBHOOK_TELEGRAM':
      return <PresetFields kind={kind} common={common} secretHint={secretHint} />;
    case 'MATTERMOST':
      return <MattermostFields common={common} />;
    case 'GOOGLE_CHAT':
      return (
        <ConfigInput
          {...common}
          name="url"
          label="Incoming webhook URL"
          type="url"
          required
          hint="In the space: Apps & integrations, Webhooks, Add webhook. The URL holds its key: keep it private."
        />
      );
    case 'NTFY':
      return <NtfyFields common={common} secretHint={secretHint} />;
    case 'GOTIFY':
      return <GotifyFields common={common} secretHint={secretHint} />;
    case 'PUSHOVER':
      return <PushoverFields common={common} secretHint={secretHint} />;
    case 'MATRIX':
      return <MatrixFields common={common} secretHint={secretHint} />;
    case 'APPRISE':
      return <AppriseFields common={common} secretHint={secretHint} />;
    case 'EMAIL':
      return (
        <ConfigInput
          {...common}
          name="address"
          label="Email address"
          type="email"
          required
          autoComplete="email"
        />
      );
    case 'SLACK':
      return <SlackFields common={common} />;
    case 'WEBHOOK':
      return (
        <WebhookFields
          common={common}
          headers={headers}
          queryParameters={queryParameters}
          secretHint={secretHint}
          onHeaders={onHeaders}
          onQueryParameters={onQueryParameters}
        />
      );
    case 'SMS':
    case 'CALL':
      return <PhoneFields common={common} />;
    case 'PAGERDUTY':
      return <PagerDutyFields common={common} secretHint={secretHint} />;
    case 'OPSGENIE':
      return <OpsgenieFields common={common} secretHint={secretHint} />;
  }
}

/** A Slack channel's config: the incoming webhook's URL and the channel. */
function SlackFields({ common }: { common: Common }) {
  return (
    <>
      <ConfigInput
        {...common}
        name="url"
        label="Incoming webhook URL"
        type="url"
        required
        hint="The https:// URL Slack gave the incoming webhook."
      />
      <ConfigInput {...common} name="channel" label="Channel" hint="Shown in the message, e.g. #ops." />
    </>
  );
}

/** An SMS or call channel's config: name and phone number. */
function PhoneFields({ common }: { common: Common }) {
  return (
    <>
      <ConfigInput {...common} name="name" label="Name" required />
      <ConfigInput
        {...common}
        name="number"
        label="Phone number"
        type="tel"
        required
        autoComplete="tel"
        hint="International format (E.164): a plus sign and the digits, e.g. +4915112345678."
      />
    </>
  );
}

/** A PagerDuty channel's config: integration key, account and service name. */
function PagerDutyFields({ common, secretHint }: { common: Common; secretHint: string | undefined }) {
  return (
    <>
      <ConfigInput
        {...common}
        name="serviceKey"
        label="Integration key"
        type="password"
        required
        autoComplete="new-password"
        hint={secretHint ?? 'The Events API v2 integration key of the PagerDuty service.'}
      />
      <ConfigInput {...common} name="account" label="Account" />
      <ConfigInput {...common} name="serviceName" label="Service name" />
    </>
  );
}

/** An Opsgenie channel's config: name, API key, region and priority. */
function OpsgenieFields({ common, secretHint }: { common: Common; secretHint: string | undefined }) {
  return (
    <>
      <ConfigInput {...common} name="name" label="Name" required />
      <ConfigInput
        {...common}
        name="apiKey"
        label="API key"
        type="password"
        required
        autoComplete="new-password"
        hint={secretHint ?? 'The API key of an Opsgenie API integration.'}
      />
      <ConfigSelect
        {...common}
        name="region"
        label="Region"
        fallback="US"
        choices={[
          { value: 'US', label: 'US' },
          { value: 'EU', label: 'EU' },
        ]}
      />
      <ConfigSelect
        {...common}
        name="priority"
        label="Priority"
        fallback="P3"
        choices={['P1', 'P2', 'P3', 'P4', 'P5'].map((p) => ({ value: p, label: p }))}
      />
    </>
  );
}

/** A webhook's config: name, URL, method, headers, query parameters, body template, secret and type. */
function WebhookFields({
  common,
  headers,
  queryParameters,
  secretHint,
  onHeaders,
  onQueryParameters,
}: {
  common: Common;
  headers: KeyValue[];
  queryParameters: KeyValue[];
  secretHint: string | undefined;
  onHeaders: (rows: KeyValue[]) => void;
  onQueryParameters: (rows: KeyValue[]) => void;
}) {
  const { config, error, onChange: onConfig } = common;
  return (
    <>
      <ConfigInput {...common} name="name" label="Name" required />
      <ConfigInput {...common} name="url" label="URL" type="url" required hint="http:// or https://" />
      <ConfigSelect
        {...common}
        name="method"
        label="Method"
        fallback="POST"
        choices={['POST', 'PUT', 'PATCH', 'GET', 'HEAD', 'DELETE'].map((m) => ({ value: m, label: m }))}
      />
      <KeyValueRows legend="Headers" name="headers" rows={headers} onChange={onHeaders} error={error} />
      <KeyValueRows
        legend="Query parameters"
        name="queryParameters"
        rows={queryParameters}
        onChange={onQueryParameters}
        error={error}
      />
      <TextAreaField
        label="Body template (optional)"
        hint="Handlebars template of the body, e.g. {{ALERT_TITLE}}; empty: the default JSON body (docs/alerting.md)."
        error={errorOf(error, 'config.template')}
        value={config.template ?? ''}
        spellcheck={false}
        onValue={(value) => onConfig('template', value)}
      />
      <ConfigInput
        {...common}
        name="webhookSecret"
        label="Signing secret"
        type="password"
        autoComplete="new-password"
        hint={secretHint ?? 'Signs every request (webhook-signature) so the receiver can verify it.'}
      />
      <ConfigInput
        {...common}
        name="webhookType"
        label="Webhook type"
        hint="Capital letters, digits and underscores, e.g. WEBHOOK_MSTEAMS."
      />
    </>
  );
}

/** A secret input: masked as typed, its saved value read back as the mask. */
function SecretInput({
  common,
  name,
  label,
  hint,
  secretHint,
  required = false,
}: {
  common: Common;
  name: string;
  label: string;
  hint: string;
  secretHint: string | undefined;
  required?: boolean;
}) {
  return (
    <ConfigInput
      {...common}
      name={name}
      label={label}
      type="password"
      required={required}
      autoComplete="new-password"
      hint={secretHint ? `${hint} ${secretHint}` : hint}
    />
  );
}

/** The body template of a chat kind: optional, its provider's format. */
function TemplateArea({ common, hint }: { common: Common; hint: string }) {
  return (
    <TextAreaField
      label="Message template (optional)"
      hint={hint}
      error={errorOf(common.error, 'config.template')}
      value={common.config.template ?? ''}
      spellcheck={false}
      onValue={(value) => common.onChange('template', value)}
    />
  );
}

/** Microsoft Teams, Discord and Telegram: webhooks of the hosted API's kinds (`webhookType`). */
function PresetFields({
  kind,
  common,
  secretHint,
}: {
  kind: 'WEBHOOK_MSTEAMS' | 'WEBHOOK_DISCORD' | 'WEBHOOK_TELEGRAM';
  common: Common;
  secretHint: string | undefined;
}) {
  const name = <ConfigInput {...common} name="name" label="Name" required />;
  if (kind === 'WEBHOOK_TELEGRAM') {
    return (
      <>
        {name}
        <SecretInput
          common={common}
          name="botToken"
          label="Bot token"
          required
          hint="The token @BotFather gave your bot (123456:ABC…)."
          secretHint={secretHint}
        />
        <ConfigInput
          {...common}
          name="chatId"
          label="Chat ID"
          required
          hint="The chat, group or channel the bot posts to: a number (-100… for groups) or @channelname."
        />
        <ConfigInput
          {...common}
          name="url"
          label="Bot API URL"
          type="url"
          hint="Empty: https://api.telegram.org. Set it for a Bot API server of your own."
        />
        <TemplateArea
          common={common}
          hint="Telegram HTML with {{ALERT_TITLE}} and the other variables; empty: Outpost’s message."
        />
      </>
    );
  }
  const teams = kind === 'WEBHOOK_MSTEAMS';
  return (
    <>
      {name}
      <ConfigInput
        {...common}
        name="url"
        label={teams ? 'Workflow URL' : 'Webhook URL'}
        type="url"
        required
        hint={
          teams
            ? 'The URL of a Teams workflow “Send webhook alerts to a channel”. It is the credential: keep it private.'
            : 'Channel settings, Integrations, Webhooks, Copy Webhook URL. It is the credential: keep it private.'
        }
      />
      <TemplateArea
        common={common}
        hint={
          teams
            ? 'JSON body (an Adaptive Card message); empty: Outpost’s card.'
            : 'JSON body with content or embeds; empty: Outpost’s message.'
        }
      />
    </>
  );
}

/** A Mattermost incoming webhook: its URL, and the channel and name it posts as. */
function MattermostFields({ common }: { common: Common }) {
  return (
    <>
      <ConfigInput
        {...common}
        name="url"
        label="Incoming webhook URL"
        type="url"
        required
        hint="Integrations, Incoming Webhooks, Add. The URL holds its key: keep it private."
      />
      <ConfigInput
        {...common}
        name="channel"
        label="Channel"
        hint="Another channel than the webhook’s, e.g. town-square."
      />
      <ConfigInput
        {...common}
        name="username"
        label="Posted as"
        hint="Needs “Enable integrations to override usernames”."
      />
    </>
  );
}

/** An ntfy topic: server, topic, priority and access token. */
function NtfyFields({ common, secretHint }: { common: Common; secretHint: string | undefined }) {
  return (
    <>
      <ConfigInput {...common} name="name" label="Name" required />
      <ConfigInput {...common} name="url" label="Server URL" type="url" hint="Empty: https://ntfy.sh." />
      <ConfigInput
        {...common}
        name="topic"
        label="Topic"
        required
        hint="Letters, digits, - and _. On ntfy.sh anyone who knows the topic can read it: pick a long one."
      />
      <ConfigInput
        {...common}
        name="priority"
        label="Priority"
        type="number"
        hint="1 (min) to 5 (max); empty: 4 for failures, 3 for the rest."
      />
      <SecretInput
        common={common}
        name="accessToken"
        label="Access token"
        hint="A tk_… token for a protected topic (Account, Access tokens)."
        secretHint={secretHint}
      />
    </>
  );
}

/** A Gotify application: server, its token and the priority. */
function GotifyFields({ common, secretHint }: { common: Common; secretHint: string | undefined }) {
  return (
    <>
      <ConfigInput {...common} name="name" label="Name" required />
      <ConfigInput
        {...common}
        name="url"
        label="Server URL"
        type="url"
        required
        hint="e.g. https://gotify.example.com"
      />
      <SecretInput
        common={common}
        name="token"
        label="Application token"
        required
        hint="In Gotify: Apps, Create application, then its token."
        secretHint={secretHint}
      />
      <ConfigInput
        {...common}
        name="priority"
        label="Priority"
        type="number"
        hint="0 to 10; empty: 8 for failures, 5 for the rest."
      />
    </>
  );
}

/** A Pushover application and user: both keys, device, priority and the API's URL. */
function PushoverFields({ common, secretHint }: { common: Common; secretHint: string | undefined }) {
  return (
    <>
      <ConfigInput {...common} name="name" label="Name" required />
      <SecretInput
        common={common}
        name="apiToken"
        label="API token"
        required
        hint="The token of an application you create at pushover.net/apps."
        secretHint={secretHint}
      />
      <SecretInput
        common={common}
        name="userKey"
        label="User or group key"
        required
        hint="On your Pushover dashboard."
        secretHint={secretHint}
      />
      <ConfigInput {...common} name="device" label="Device" hint="Empty: all of the user’s devices." />
      <ConfigInput
        {...common}
        name="priority"
        label="Priority"
        type="number"
        hint="-2 (no alert) to 1 (high, past quiet hours); empty: 0."
      />
      <ConfigInput
        {...common}
        name="url"
        label="API URL"
        type="url"
        hint="Empty: https://api.pushover.net."
      />
    </>
  );
}

/** A Matrix room: homeserver, room ID and the access token of the account that posts. */
function MatrixFields({ common, secretHint }: { common: Common; secretHint: string | undefined }) {
  return (
    <>
      <ConfigInput {...common} name="name" label="Name" required />
      <ConfigInput
        {...common}
        name="homeserverUrl"
        label="Homeserver URL"
        type="url"
        required
        hint="e.g. https://matrix.example.org"
      />
      <ConfigInput
        {...common}
        name="roomId"
        label="Room ID"
        required
        hint="!…:server, in the room’s settings (Advanced). The account must have joined the room."
      />
      <SecretInput
        common={common}
        name="accessToken"
        label="Access token"
        required
        hint="The access token of the account that posts (Element: Settings, Help & About)."
        secretHint={secretHint}
      />
    </>
  );
}

/** An Apprise API server: its URL, and a stored configuration's key or Apprise URLs. */
function AppriseFields({ common, secretHint }: { common: Common; secretHint: string | undefined }) {
  return (
    <>
      <ConfigInput {...common} name="name" label="Name" required />
      <ConfigInput
        {...common}
        name="url"
        label="Apprise API URL"
        type="url"
        required
        hint="The Apprise API server, e.g. http://apprise:8000"
      />
      <ConfigInput
        {...common}
        name="key"
        label="Configuration key"
        hint="A configuration stored on the server. Give this or Apprise URLs."
      />
      <ConfigInput {...common} name="tag" label="Tag" hint="With a key: only the services with this tag." />
      <SecretInput
        common={common}
        name="urls"
        label="Apprise URLs"
        hint="Without a key: the services’ URLs, e.g. tgram://token/chat, separated by commas or spaces."
        secretHint={secretHint}
      />
    </>
  );
}
