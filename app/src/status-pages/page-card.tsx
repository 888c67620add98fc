/**
 * One status page in the list, with its custom domain's verification.
 */
import { useState } from 'preact/hooks';
import { deleteStatusPage, verifyCustomDomain } from '../api/status-pages.js';
import type { StatusPage } from '../api/schemas.js';
import { ConfirmButton, messageOf } from '../ui/widgets.js';
import { useCan } from '../ui/permissions.js';

/**
 * One status page: its link, visibility, custom domain (and, while pending, the TXT record that verifies it),
 * description, cards with their services, and open incidents.
 */
export function PageCard({
  page,
  onEdit,
  onDeleted,
  onChanged,
}: {
  page: StatusPage;
  onEdit: () => void;
  onDeleted: () => void;
  /** The page changed on the service (its custom domain was checked). */
  onChanged: () => void;
}) {
  const headingId = `sp-page-${page.id}`;
  return (
    <article class="card sp-page" aria-labelledby={headingId}>
      <PageCardHead page={page} headingId={headingId} onEdit={onEdit} onDeleted={onDeleted} />
      <PageMeta page={page} />
      {page.customDomain && page.customDomainStatus === 'PENDING' && page.customDomainVerification ? (
        <DomainVerification page={page} onChecked={onChanged} />
      ) : null}
      {page.description ? <p class="sp-description">{page.description}</p> : null}
      <PageCards page={page} />
      <OpenIncidents page={page} />
    </article>
  );
}

/** The page's name, Edit and Delete. */
function PageCardHead({
  page,
  headingId,
  onEdit,
  onDeleted,
}: {
  page: StatusPage;
  headingId: string;
  onEdit: () => void;
  onDeleted: () => void;
}) {
  const canWrite = useCan('write');
  return (
    <div class="misc-section-head">
      <h3 id={headingId}>{page.name}</h3>
      {canWrite ? (
        <div class="misc-buttons">
          <button type="button" class="button-secondary misc-small" onClick={onEdit}>
            Edit<span class="visually-hidden"> {page.name}</span>
          </button>
          <ConfirmButton
            small
            label={
              <>
                Delete<span class="visually-hidden"> {page.name}</span>
              </>
            }
            question={
              <>
                Delete the status page <strong>{page.name}</strong>? Its address stops answering; its services
                and incidents stay.
              </>
            }
            confirmLabel="Delete page"
            onConfirm={async () => {
              await deleteStatusPage(page.id);
              onDeleted();
            }}
          />
        </div>
      ) : null}
    </div>
  );
}

/** A badge: its glyph (hidden from assistive technology) and its text. */
function Badge({ kind, glyph, text }: { kind: string; glyph: string; text: string }) {
  return (
    <span class={`badge badge-${kind}`}>
      <span aria-hidden="true" class="badge-glyph">
        {glyph}
      </span>
      {text}
    </span>
  );
}

/** The page's link, visibility, access keys and custom domain with its state. */
function PageMeta({ page }: { page: StatusPage }) {
  return (
    <p class="sp-meta">
      <a href={`/status/${encodeURIComponent(page.url)}`} target="_blank" rel="noopener noreferrer">
        /status/{page.url}
        <span class="visually-hidden"> (opens in a new tab)</span>
        <span aria-hidden="true"> ↗</span>
      </a>{' '}
      {page.isPrivate ? (
        <Badge kind="paused" glyph="○" text="Private" />
      ) : (
        <Badge kind="passing" glyph="●" text="Public" />
      )}
      {page.isPrivate ? (
        <span class="muted">
          {' '}
          · {page.keys.length === 1 ? '1 access key' : `${page.keys.length} access keys`}
        </span>
      ) : null}
      {page.customDomain ? (
        <span class="muted">
          {' '}
          · {page.customDomain}{' '}
          {page.customDomainStatus === 'VERIFIED' ? (
            <Badge kind="passing" glyph="●" text="Domain verified" />
          ) : (
            <Badge kind="pending" glyph="○" text="Domain pending" />
          )}
        </span>
      ) : null}
    </p>
  );
}

/** The page's cards with their services. */
function PageCards({ page }: { page: StatusPage }) {
  return page.cards.length === 0 ? (
    <p class="muted">No card: the page shows no service yet. Edit it to add cards.</p>
  ) : (
    <ul class="sp-cards" aria-label={`Cards of ${page.name}`}>
      {page.cards.map((card) => (
        <li key={card.id}>
          <strong>{card.name}</strong>
          {card.services.length === 0 ? (
            <span class="muted"> (no service)</span>
          ) : (
            <ul class="misc-chips" aria-label={`Services of card ${card.name}`}>
              {card.services.map((s) => (
                <li key={s.id}>{s.name}</li>
              ))}
            </ul>
          )}
        </li>
      ))}
    </ul>
  );
}

/** The open incidents on the page's services, each a link. */
function OpenIncidents({ page }: { page: StatusPage }) {
  const open = page.incidents.filter((i) => i.lastUpdateStatus !== 'RESOLVED');
  return (
    <p class="muted sp-incidents">
      {open.length === 0 ? (
        'No open incident on its services.'
      ) : (
        <>
          Open incidents:{' '}
          {open.map((i, n) => (
            <span key={i.id}>
              {n > 0 ? ', ' : ''}
              <a href={`/incidents/${encodeURIComponent(i.id)}`}>{i.name}</a>
            </span>
          ))}
        </>
      )}
    </p>
  );
}

/**
 * A pending custom domain (docs/status-pages.md, "Custom domains"): the TXT record to add at the domain's DNS
 * host, why the last check did not verify it, and a button that checks it now.
 */
function DomainVerification({ page, onChecked }: { page: StatusPage; onChecked: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const record = page.customDomainVerification!;
  const headingId = `sp-domain-${page.id}`;
  const canWrite = useCan('write');

  async function check() {
    setBusy(true);
    setError(null);
    try {
      await verifyCustomDomain(page.id);
      onChecked();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="sp-domain" aria-labelledby={headingId}>
      <h4 id={headingId}>Verify {page.customDomain}</h4>
      <p>
        The page is not served at <strong>{page.customDomain}</strong> until the domain is verified. Add this
        DNS record at the domain’s DNS host, then check it (the service also checks every few minutes):
      </p>
      <table class="sp-domain-record">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Text</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>
              <code>{record.name}</code>
            </td>
            <td>{record.type}</td>
            <td>
              <code>{record.value}</code>
            </td>
          </tr>
        </tbody>
      </table>
      {page.customDomainProblem ? <p class="muted">Last check: {page.customDomainProblem}.</p> : null}
      {canWrite ? (
        <button type="button" class="button-secondary misc-small" disabled={busy} onClick={check}>
          {busy ? 'Checking…' : 'Check now'}
          <span class="visually-hidden"> {page.customDomain}</span>
        </button>
      ) : null}
      {error ? (
        <p class="field-error" role="alert">
          {messageOf(error)}
        </p>
      ) : null}
    </section>
  );
}
