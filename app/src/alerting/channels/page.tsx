import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { listAlertChannels } from '../../api/alerting.js';
import { ListStatus, YesNo } from '../../ui/widgets.js';
import { PageHeader } from '../../ui/page.js';
import { useLoad, useTitle } from '../../ui/hooks.js';
import './channels.css';
import { kindOf, sendsOf, targetOf, typeLabel } from './describe.js';
import { ChannelForm } from './form.js';
import { ChannelDetail } from './detail.js';
import { useCan } from '../../ui/permissions.js';

/**
 * Alert channels (`/alert-channels`) and one of them with its notification log
 * (`/alert-channels/:channelId`): where alerts go (email, Slack, webhook, PagerDuty, Opsgenie, SMS, phone
 * call), which changes each hears about, a test notification, and every delivery attempt.
 */
export default function AlertChannelsPage({ channelId }: { channelId?: string }) {
  return channelId ? <ChannelDetail id={channelId} /> : <ChannelList />;
}

function ChannelList() {
  useTitle('Alert channels');
  const channels = useLoad((signal) => listAlertChannels(signal), []);
  const [creating, setCreating] = useState(false);
  const canWrite = useCan('write');
  const { route } = useLocation();

  return (
    <>
      <PageHeader title="Alert channels">
        {canWrite ? (
          <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
            {creating ? 'Close the form' : 'New alert channel'}
          </button>
        ) : null}
      </PageHeader>
      <p class="muted ac-intro">
        Alerts of the checks subscribed to a channel (directly, through their check group, or because the
        channel subscribes new checks) are sent there, each exactly once, with every attempt recorded.
      </p>
      {creating && canWrite ? (
        <ChannelForm
          onSaved={(channel) => route(`/alert-channels/${channel.id}`)}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      <ListStatus load={channels} loading="Loading alert channels" isEmpty={channels.data?.length === 0}>
        No alert channel yet: alerts are recorded but nobody is told.
        {canWrite ? (
          <>
            {' '}
            Create one with <strong>New alert channel</strong>, then send it a test notification.
          </>
        ) : null}
      </ListStatus>
      {channels.data && channels.data.length > 0 ? (
        <div class="table-wrap">
          <table class="misc-table">
            <caption class="visually-hidden">Alert channels</caption>
            <thead>
              <tr>
                <th scope="col">Channel</th>
                <th scope="col">Type</th>
                <th scope="col">Sends</th>
                <th scope="col" class="num">
                  Subscriptions
                </th>
                <th scope="col">New checks subscribe</th>
              </tr>
            </thead>
            <tbody>
              {channels.data.map((channel) => (
                <tr key={channel.id}>
                  <th scope="row">
                    <a href={`/alert-channels/${channel.id}`}>
                      {targetOf(channel) || `Channel ${channel.id}`}
                    </a>
                  </th>
                  <td>{typeLabel(kindOf(channel))}</td>
                  <td>{sendsOf(channel)}</td>
                  <td class="num">{channel.subscriptions.filter((s) => s.activated).length}</td>
                  <td>
                    <YesNo value={channel.autoSubscribe} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
