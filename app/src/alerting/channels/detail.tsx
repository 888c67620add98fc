/** One alert channel (`/alert-channels/:channelId`): its config, test sends, subscriptions and notification log. */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { deleteAlertChannel, getAlertChannel, testAlertChannel } from '../../api/alerting.js';
import { FormError } from '../../ui/forms.js';
import type { AlertChannel, AlertNotification } from '../../api/schemas.js';
import { Breadcrumbs, ConfirmButton, YesNo } from '../../ui/widgets.js';
import { useCan } from '../../ui/permissions.js';
import { ErrorNotice, Loading, PageHeader } from '../../ui/page.js';
import { useLoad, useTitle } from '../../ui/hooks.js';
import { CONFIG_LABELS, type KeyValue, kindOf, targetOf, typeLabel } from './describe.js';
import { ChannelForm } from './form.js';
import { AttemptsTable, NotificationLog } from './notifications.js';
import { Subscriptions } from './subscriptions.js';

/** What the configuration of a channel says, as the API answers it (secrets read `*****`). */
function ConfigList({ channel }: { channel: AlertChannel }) {
  const entries = Object.entries(channel.config as Record<string, unknown>);
  const show = (value: unknown) => {
    if (value === null || value === undefined || value === '') return <span class="muted">—</span>;
    if (Array.isArray(value)) {
      if (value.length === 0) return <span class="muted">none</span>;
      return (
        <ul class="ac-plain-list">
          {(value as KeyValue[]).map((r) => (
            <li key={r.key}>
              <code>
                {r.key}: {r.value}
              </code>
            </li>
          ))}
        </ul>
      );
    }
    if (typeof value === 'string' && value.includes('\n')) return <pre>{value}</pre>;
    return <span>{String(value)}</span>;
  };
  return (
    <dl class="misc-dl">
      {entries.map(([name, value]) => (
        <Fragment key={name}>
          <dt>{CONFIG_LABELS[name] ?? name}</dt>
          <dd>{show(value)}</dd>
        </Fragment>
      ))}
    </dl>
  );
}
/** One channel's page. */
export function ChannelDetail({ id }: { id: string }) {
  const { route } = useLocation();
  const channel = useLoad((signal) => getAlertChannel(id, signal), [id]);
  const [editing, setEditing] = useState(false);
  const [testing, setTesting] = useState(false);
  const [test, setTest] = useState<AlertNotification | null>(null);
  const [testError, setTestError] = useState<unknown>(null);
  const [logVersion, setLogVersion] = useState(0);
  const canWrite = useCan('write');
  const data = channel.data;
  const title = data ? targetOf(data) || `${typeLabel(kindOf(data))} channel` : 'Alert channel';
  useTitle(data ? `${title} · Alert channels` : 'Alert channel');

  if (channel.error && !data) {
    return (
      <>
        <Breadcrumbs items={[{ href: '/alert-channels', label: 'Alert channels' }, { label: id }]} />
        <PageHeader title="Alert channel" />
        <ErrorNotice error={channel.error} />
      </>
    );
  }
  if (!data) return <Loading what="Loading the alert channel" />;

  async function sendTest() {
    setTesting(true);
    setTestError(null);
    setTest(null);
    try {
      setTest(await testAlertChannel(id, 10));
      setLogVersion((v) => v + 1);
    } catch (err) {
      setTestError(err);
    } finally {
      setTesting(false);
    }
  }
  return (
    <>
      <Breadcrumbs items={[{ href: '/alert-channels', label: 'Alert channels' }, { label: title }]} />
      <PageHeader title={title}>
        {canWrite ? (
          <>
            <button type="button" onClick={sendTest} disabled={testing}>
              {testing ? 'Sending the test…' : 'Send test notification'}
            </button>
            <button
              type="button"
              class="button-secondary"
              aria-expanded={editing}
              onClick={() => setEditing(!editing)}
            >
              {editing ? 'Close the form' : 'Edit'}
            </button>
            <ConfirmButton
              label="Delete channel"
              question={
                <>
                  Delete the alert channel <strong>{title}</strong>? Its subscriptions go with it; alerts are
                  no longer sent there.
                </>
              }
              confirmLabel="Delete channel"
              onConfirm={async () => {
                await deleteAlertChannel(id);
                route('/alert-channels');
              }}
            />
          </>
        ) : null}
      </PageHeader>
      <TestOutcome testing={testing} test={test} />
      <FormError error={testError} />

      {editing && canWrite ? (
        <ChannelForm
          channel={data}
          onSaved={() => {
            setEditing(false);
            channel.reload();
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}
      <ChannelSummary channel={data} />

      <Subscriptions channel={data} onSaved={channel.reload} />
      <NotificationLog channelId={data.id} version={logVersion} />
    </>
  );
}

/** What the test send did: waiting, its first attempt's outcome, or still queued. Read out as it changes. */
function TestOutcome({ testing, test }: { testing: boolean; test: AlertNotification | null }) {
  const attempt = test?.attempts[test.attempts.length - 1];
  return (
    <div aria-live="polite">
      {testing ? <p class="muted">Waiting up to 10 seconds for the first delivery attempt…</p> : null}
      {test && attempt ? (
        <div
          class={`notice ${attempt.outcome === 'DELIVERED' ? 'notice-ok' : 'notice-error'}`}
          role={attempt.outcome === 'DELIVERED' ? 'status' : 'alert'}
        >
          <strong>
            {attempt.outcome === 'DELIVERED'
              ? 'The test notification was delivered.'
              : attempt.outcome === 'RETRY'
                ? 'The test notification was not delivered yet: it will be tried again.'
                : 'The test notification could not be delivered.'}
          </strong>
          <AttemptsTable attempts={[attempt]} caption="The test notification's first attempt" />
        </div>
      ) : null}
      {test && !attempt ? (
        <div class="notice" role="status">
          <strong>No attempt finished within 10 seconds.</strong>
          <p>The test notification is queued; its attempts show in the notification log below.</p>
        </div>
      ) : null}
    </div>
  );
}

/** The channel's settings, and what it is told about. */
function ChannelSummary({ channel: data }: { channel: AlertChannel }) {
  return (
    <div class="grid ac-summary">
      <section class="card" aria-labelledby="ac-settings">
        <h2 id="ac-settings">{typeLabel(kindOf(data))} settings</h2>
        <ConfigList channel={data} />
      </section>
      <section class="card" aria-labelledby="ac-flags">
        <h2 id="ac-flags">What it is told about</h2>
        <dl class="misc-dl">
          <dt>Failures</dt>
          <dd>
            <YesNo value={data.sendFailure} />
          </dd>
          <dt>Degradations</dt>
          <dd>
            <YesNo value={data.sendDegraded} />
          </dd>
          <dt>Recoveries</dt>
          <dd>
            <YesNo value={data.sendRecovery} />
          </dd>
          <dt>SSL expiry</dt>
          <dd>{data.sslExpiry ? `${data.sslExpiryThreshold} days before` : <YesNo value={false} />}</dd>
          <dt>New checks subscribe</dt>
          <dd>
            <YesNo value={data.autoSubscribe} />
          </dd>
        </dl>
      </section>
    </div>
  );
}
