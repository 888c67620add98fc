import { formatDateTime, formatRelative } from '../ui/format.js';
import type { Agent } from '../api/schemas.js';

/**
 * How the private-locations and agent pages show an agent: its short name, whether it is connected (text
 * and glyph, never colour alone), its free slots, and a time with its exact value on hover.
 */

/** The first 8 characters of an agent's id: enough to tell agents apart in a list. */
export function shortId(id: string): string {
  return id.length > 12 ? id.slice(0, 8) : id;
}

/** "● Connected" (claimed within the last 35 s) or "○ Not connected". */
export function ConnectedBadge({ connected }: { connected: boolean }) {
  return connected ? (
    <span class="badge badge-passing">
      <span aria-hidden="true" class="badge-glyph">
        ●
      </span>
      Connected
    </span>
  ) : (
    <span class="badge badge-paused">
      <span aria-hidden="true" class="badge-glyph">
        ○
      </span>
      Not connected
    </span>
  );
}

/**
 * The free slots an agent's last claims reported, per job class: `uptime 8 · main 10`; "not reported"
 * before its first claim reported them.
 */
export function formatSlots(slots: Agent['freeSlots']): string {
  if (!slots) return 'not reported';
  return `uptime ${slots.uptime} · main ${slots.main}`;
}

/**
 * What an agent serves: the data-center locations it named (every one when it named none; never a private
 * location), or its private location (a link).
 */
export function AgentScope({ agent }: { agent: Agent }) {
  if (agent.scope === 'ACCOUNT' || !agent.privateLocation) {
    return (
      <span>
        {agent.locations
          ? `Data-center locations ${agent.locations.join(', ')}`
          : 'Every data-center location'}
      </span>
    );
  }
  return (
    <span>
      Private location{' '}
      <a href={`/private-locations/${encodeURIComponent(agent.privateLocation.id)}`}>
        {agent.privateLocation.name}
      </a>
    </span>
  );
}

/** A time as "3 minutes ago" in a `<time>` element whose title and datetime hold the exact time. */
export function When({ iso, never = 'never' }: { iso: string | null | undefined; never?: string }) {
  if (!iso) return <span class="muted">{never}</span>;
  return (
    <time dateTime={iso} title={formatDateTime(iso)}>
      {formatRelative(iso)}
    </time>
  );
}

/** The agents of a list (a private location's, or the account's): each with its state, linking to it. */
export function AgentsTable({
  agents,
  caption,
  showScope = false,
}: {
  agents: readonly Agent[];
  caption: string;
  showScope?: boolean;
}) {
  return (
    <div class="table-wrap">
      <table class="misc-table">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Agent</th>
            {showScope ? <th scope="col">Serves</th> : null}
            <th scope="col">Version</th>
            <th scope="col">Status</th>
            <th scope="col">Last seen</th>
            <th scope="col">Free slots</th>
            <th scope="col" class="num">
              Running jobs
            </th>
          </tr>
        </thead>
        <tbody>
          {agents.map((agent) => (
            <tr key={agent.id}>
              <th scope="row">
                <a href={`/agents/${encodeURIComponent(agent.id)}`}>
                  {agent.hostName ? <span>{agent.hostName} </span> : null}
                  <code>{shortId(agent.id)}</code>
                </a>
              </th>
              {showScope ? (
                <td>
                  <AgentScope agent={agent} />
                </td>
              ) : null}
              <td>{agent.version}</td>
              <td>
                <ConnectedBadge connected={agent.connected} />
              </td>
              <td>
                <When iso={agent.lastSeenAt} />
              </td>
              <td>{formatSlots(agent.freeSlots)}</td>
              <td class="num">{agent.runningJobs.length}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
