import { NEW_CHECK_CHOICES } from '../labels.js';
import { Empty } from '../../ui/page.js';
import { useCan } from '../../ui/permissions.js';

/**
 * The checks page of an account without checks: what a check is and a link to each kind of new check (for a
 * session that may create one; the others are told whom to ask).
 */
export function NoChecksYet() {
  if (!useCan('write')) {
    return (
      <Empty>
        <h2>No checks yet</h2>
        <p>
          A check watches one thing (an API, a site, a port, a DNS record, a host, a scheduled job) from your
          run locations, on a schedule. Your role cannot create checks; ask an admin to create them, or to
          give you a role that can.
        </p>
      </Empty>
    );
  }
  return (
    <Empty>
      <h2>No checks yet</h2>
      <p>
        A check watches one thing (an API, a site, a port, a DNS record, a host, a scheduled job) from your
        run locations, on a schedule, and alerts your alert channels when it fails. Create the first one:
      </p>
      <ul class="checks-empty-choices">
        {NEW_CHECK_CHOICES.map((c) => (
          <li key={c.type}>
            <a href={`/checks/new?type=${c.type}`}>{c.label}</a> <span class="muted">— {c.hint}</span>
          </li>
        ))}
      </ul>
      <p>
        Checks run on an agent: the service runs one itself, and you can add your own on your network from{' '}
        <a href="/private-locations">Private locations</a>.
      </p>
    </Empty>
  );
}
