import { useState } from 'preact/hooks';
import { ApiError, api, getAllEntries } from '../api.js';
import { FormError, TextAreaField, TextField } from '../components/forms.js';
import { loadServices, ServicePicker } from '../components/misc-services.js';
import type { ServiceView, StatusPage } from '../components/misc-types.js';
import {
  Checkbox,
  ConfirmButton,
  errorOf,
  FormButtons,
  formLevelError,
  ListStatus,
  messageOf,
  OneTimeSecret,
  slugOf,
} from '../components/misc-ui.js';
import { Loading, PageHeader } from '../components/page.js';
import { useLoad, useTitle } from '../hooks.js';
import './status-pages.css';

/** A card while the form edits it: `key` tells cards apart in the form, `id` keeps an existing card. */
type CardDraft = { key: number; id?: string; name: string; services: Set<string> };

let nextCardKey = 1;

/**
 * Status pages (`/status-pages`): the account's pages (name, url, public or private, cards and the services
 * each shows), each linking to its public page, and the status-page services that cards show and incidents
 * concern.
 */
export default function StatusPagesPage() {
  useTitle('Status pages');
  const pages = useLoad((signal) => getAllEntries<StatusPage>('/v1/status-pages', signal), []);
  const services = useLoad(loadServices, []);
  const [creating, setCreating] = useState(false);
  const [editingId, setEditingId] = useState<string | null>(null);
  const [accessKey, setAccessKey] = useState<{ page: string; key: string } | null>(null);

  function reloadAll() {
    pages.reload();
    services.reload();
  }

  return (
    <>
      <PageHeader title="Status pages">
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {creating ? 'Close the form' : 'New status page'}
        </button>
      </PageHeader>
      <p class="muted sp-intro">
        A status page shows your visitors the state of your services, card by card, and the incidents that
        concern them.
      </p>

      {accessKey ? (
        <OneTimeSecret
          title={<>Access key of the private page “{accessKey.page}”:</>}
          label={`Access key of ${accessKey.page}`}
          secret={accessKey.key}
          onDismiss={() => setAccessKey(null)}
        >
          <p>Give it to the people who may see the page.</p>
        </OneTimeSecret>
      ) : null}

      {creating ? (
        <PageForm
          services={services.data}
          onSaved={(page) => {
            setCreating(false);
            const key = page.keys.find((k) => k.key)?.key;
            if (key) setAccessKey({ page: page.name, key });
            pages.reload();
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}

      <section aria-labelledby="sp-pages">
        <h2 id="sp-pages">Pages</h2>
        <ListStatus load={pages} loading="Loading status pages" isEmpty={pages.data?.length === 0}>
          No status page yet. Add the services you want to show under <strong>Services</strong> below, then
          create a page with <strong>New status page</strong>.
        </ListStatus>
        {pages.data && pages.data.length > 0 ? (
          <ul class="sp-pages">
            {pages.data.map((page) =>
              editingId === page.id ? (
                <li key={page.id}>
                  <PageForm
                    page={page}
                    services={services.data}
                    onSaved={(saved) => {
                      setEditingId(null);
                      const key = saved.keys.find((k) => k.key)?.key;
                      if (key) setAccessKey({ page: saved.name, key });
                      pages.reload();
                    }}
                    onCancel={() => setEditingId(null)}
                  />
                </li>
              ) : (
                <li key={page.id}>
                  <PageCard
                    page={page}
                    onEdit={() => setEditingId(page.id)}
                    onDeleted={reloadAll}
                    onChanged={pages.reload}
                  />
                </li>
              ),
            )}
          </ul>
        ) : null}
      </section>

      <Services
        services={services}
        pages={pages.data ?? []}
        onChanged={() => {
          services.reload();
          pages.reload();
        }}
      />
    </>
  );
}

/**
 * One status page: its link, visibility, custom domain (and, while pending, the TXT record that verifies it),
 * description, cards with their services, and open incidents.
 */
function PageCard({
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
  const open = page.incidents.filter((i) => i.lastUpdateStatus !== 'RESOLVED');
  return (
    <article class="card sp-page" aria-labelledby={headingId}>
      <div class="misc-section-head">
        <h3 id={headingId}>{page.name}</h3>
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
              await api.delete(`/v1/status-pages/${encodeURIComponent(page.id)}`);
              onDeleted();
            }}
          />
        </div>
      </div>
      <p class="sp-meta">
        <a href={`/status/${encodeURIComponent(page.url)}`} target="_blank" rel="noopener noreferrer">
          /status/{page.url}
          <span class="visually-hidden"> (opens in a new tab)</span>
          <span aria-hidden="true"> ↗</span>
        </a>{' '}
        {page.isPrivate ? (
          <span class="badge badge-paused">
            <span aria-hidden="true" class="badge-glyph">
              ○
            </span>
            Private
          </span>
        ) : (
          <span class="badge badge-passing">
            <span aria-hidden="true" class="badge-glyph">
              ●
            </span>
            Public
          </span>
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
              <span class="badge badge-passing">
                <span aria-hidden="true" class="badge-glyph">
                  ●
                </span>
                Domain verified
              </span>
            ) : (
              <span class="badge badge-pending">
                <span aria-hidden="true" class="badge-glyph">
                  ○
                </span>
                Domain pending
              </span>
            )}
          </span>
        ) : null}
      </p>
      {page.customDomain && page.customDomainStatus === 'PENDING' && page.customDomainVerification ? (
        <DomainVerification page={page} onChecked={onChanged} />
      ) : null}
      {page.description ? <p class="sp-description">{page.description}</p> : null}
      {page.cards.length === 0 ? (
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
      )}
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
    </article>
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

  async function check() {
    setBusy(true);
    setError(null);
    try {
      await api.post<StatusPage>(`/v1/status-pages/${encodeURIComponent(page.id)}/custom-domain/verify`);
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
      <button type="button" class="button-secondary misc-small" disabled={busy} onClick={check}>
        {busy ? 'Checking…' : 'Check now'}
        <span class="visually-hidden"> {page.customDomain}</span>
      </button>
      {error ? (
        <p class="field-error" role="alert">
          {messageOf(error)}
        </p>
      ) : null}
    </section>
  );
}

/** Create (no `page`) or edit a status page: name, url, description, private, and its cards. */
function PageForm({
  page,
  services,
  onSaved,
  onCancel,
}: {
  page?: StatusPage;
  /** The services cards may show; undefined while they load. */
  services: readonly ServiceView[] | undefined;
  onSaved: (page: StatusPage) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState(page?.name ?? '');
  const [url, setUrl] = useState(page?.url ?? '');
  const [urlEdited, setUrlEdited] = useState(page !== undefined);
  const [description, setDescription] = useState(page?.description ?? '');
  const [isPrivate, setIsPrivate] = useState(page?.isPrivate ?? false);
  const [cards, setCards] = useState<CardDraft[]>(() =>
    page
      ? page.cards.map((c) => ({
          key: nextCardKey++,
          id: c.id,
          name: c.name,
          services: new Set(c.services.map((s) => s.id)),
        }))
      : [{ key: nextCardKey++, name: 'Services', services: new Set<string>() }],
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const setCard = (key: number, patch: Partial<CardDraft>) =>
    setCards(cards.map((c) => (c.key === key ? { ...c, ...patch } : c)));
  const move = (index: number, by: number) => {
    const next = [...cards];
    const [card] = next.splice(index, 1);
    if (card) next.splice(index + by, 0, card);
    setCards(next);
  };

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const body = {
      name: name.trim(),
      url: url.trim(),
      description: description.trim() ? description.trim() : null,
      isPrivate,
      cards: cards.map((c) => ({
        ...(c.id ? { id: c.id } : {}),
        name: c.name.trim(),
        services: [...c.services].map((id) => ({ id })),
      })),
    };
    try {
      const saved = page
        ? await api.put<StatusPage>(`/v1/status-pages/${encodeURIComponent(page.id)}`, body)
        : await api.post<StatusPage>('/v1/status-pages', body);
      onSaved(saved);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const headingId = page ? `sp-edit-${page.id}` : 'sp-new';
  const Heading = page ? 'h3' : 'h2';
  return (
    <form class="card misc-form sp-form" onSubmit={submit} noValidate aria-labelledby={headingId}>
      <Heading id={headingId}>{page ? `Edit ${page.name}` : 'New status page'}</Heading>
      <TextField
        label="Name"
        error={errorOf(error, 'name')}
        required
        maxLength={255}
        value={name}
        onValue={(value) => {
          setName(value);
          if (!urlEdited) setUrl(slugOf(value));
        }}
      />
      <TextField
        label="Address"
        hint={
          <>
            The page answers at <code>/status/{url || '…'}</code>: lower-case letters, digits and hyphens,
            unique in the account.
          </>
        }
        error={errorOf(error, 'url')}
        required
        maxLength={63}
        spellcheck={false}
        value={url}
        onValue={(value) => {
          setUrl(value);
          setUrlEdited(true);
        }}
      />
      <TextAreaField
        label="Description (optional)"
        hint="At most 500 characters, shown under the page's name."
        error={errorOf(error, 'description')}
        class="sp-text"
        maxLength={500}
        value={description}
        onValue={setDescription}
      />
      <Checkbox
        label="Private"
        checked={isPrivate}
        onChange={setIsPrivate}
        hint="Only people with an access key can see it; the key is shown once, when the page is made private."
      />
      <fieldset>
        <legend>Cards</legend>
        <p class="field-hint">Each card shows the services you pick, in this order.</p>
        {cards.length === 0 ? <p class="muted">No card: the page will show no service.</p> : null}
        <ol class="sp-card-drafts">
          {cards.map((card, i) => (
            <li key={card.key} class="sp-card-draft">
              <TextField
                label={`Name of card ${i + 1}`}
                error={errorOf(error, `cards[${i}].name`)}
                required
                maxLength={255}
                value={card.name}
                onValue={(value) => setCard(card.key, { name: value })}
              />
              {services ? (
                <ServicePicker
                  legend={`Services of card ${i + 1}`}
                  services={services}
                  selected={card.services}
                  onChange={(selected) => setCard(card.key, { services: selected })}
                  error={errorOf(error, `cards[${i}].services`)}
                  empty="No service yet: add services under Services below first."
                />
              ) : (
                <Loading what="Loading services" />
              )}
              <div class="misc-buttons">
                <button
                  type="button"
                  class="button-secondary misc-small"
                  disabled={i === 0}
                  onClick={() => move(i, -1)}
                >
                  Move up<span class="visually-hidden"> card {i + 1}</span>
                </button>
                <button
                  type="button"
                  class="button-secondary misc-small"
                  disabled={i === cards.length - 1}
                  onClick={() => move(i, 1)}
                >
                  Move down<span class="visually-hidden"> card {i + 1}</span>
                </button>
                <button
                  type="button"
                  class="button-danger misc-small"
                  onClick={() => setCards(cards.filter((c) => c.key !== card.key))}
                >
                  Remove card {i + 1}
                </button>
              </div>
            </li>
          ))}
        </ol>
        <button
          type="button"
          class="button-secondary"
          onClick={() => setCards([...cards, { key: nextCardKey++, name: '', services: new Set<string>() }])}
        >
          Add card
        </button>
      </fieldset>
      <FormError
        error={formLevelError(error, [
          'name',
          'url',
          'description',
          ...cards.flatMap((_, i) => [`cards[${i}].name`, `cards[${i}].services`]),
        ])}
      />
      <FormButtons label={page ? 'Save' : 'Create status page'} busy={busy} onCancel={onCancel} />
    </form>
  );
}

/** The status-page services: add, rename, delete (refused while a card shows the service). */
function Services({
  services,
  pages,
  onChanged,
}: {
  services: { data: ServiceView[] | undefined; error: Error | undefined };
  pages: readonly StatusPage[];
  onChanged: () => void;
}) {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const shownOn = new Map<string, string[]>();
  const pageNames = new Map(pages.map((p) => [p.id, p.name]));
  for (const page of pages) {
    for (const card of page.cards) {
      for (const s of card.services) {
        const list = shownOn.get(s.id) ?? [];
        if (!list.includes(page.name)) list.push(page.name);
        shownOn.set(s.id, list);
      }
    }
  }

  async function add(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.post('/v1/status-pages/services', { name: name.trim() });
      setName('');
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="sp-services">
      <h2 id="sp-services">Services</h2>
      <p class="muted">
        The things your status pages report on (an API, a website, a region). Cards show them; incidents
        concern them.
      </p>
      <form class="sp-add-service" onSubmit={add} noValidate aria-label="Add a service">
        <TextField
          label="New service"
          error={errorOf(error, 'name')}
          required
          maxLength={255}
          value={name}
          onValue={setName}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Adding…' : 'Add service'}
        </button>
      </form>
      <FormError error={formLevelError(error, ['name'])} />
      <ListStatus load={services} loading="Loading services" isEmpty={services.data?.length === 0}>
        No service yet. Add the first one above, e.g. “Website” or “Public API”.
      </ListStatus>
      {services.data && services.data.length > 0 ? (
        <div class="table-wrap">
          <table class="misc-table">
            <caption class="visually-hidden">Status-page services</caption>
            <thead>
              <tr>
                <th scope="col">Service</th>
                <th scope="col">Shown on</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {services.data.map((service) => (
                <ServiceRow
                  key={service.id}
                  service={service}
                  shownOn={shownOn.get(service.id) ?? []}
                  pageNames={pageNames}
                  onChanged={onChanged}
                />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function ServiceRow({
  service,
  shownOn,
  pageNames,
  onChanged,
}: {
  service: ServiceView;
  shownOn: string[];
  pageNames: ReadonlyMap<string, string>;
  onChanged: () => void;
}) {
  /** The 409 of a service a card still shows, naming the pages (the API names them by id). */
  const describeError = (err: unknown) => {
    const ids = err instanceof ApiError ? err.body?.attributes?.statusPageIds : undefined;
    if (err instanceof ApiError && err.status === 409 && Array.isArray(ids)) {
      const names = ids.map((id) => pageNames.get(String(id)) ?? String(id));
      return `It cannot be deleted: a card of ${names.length === 1 ? 'the status page' : 'the status pages'} ${names.join(', ')} shows it. Remove it from their cards first.`;
    }
    return messageOf(err);
  };
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(service.name);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const path = `/v1/status-pages/services/${encodeURIComponent(service.id)}`;

  async function rename(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.put(path, { name: name.trim() });
      setRenaming(false);
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <tr>
      <th scope="row">
        {renaming ? (
          <form class="sp-rename" onSubmit={rename} noValidate aria-label={`Rename ${service.name}`}>
            <TextField
              label={`New name of ${service.name}`}
              error={errorOf(error, 'name')}
              required
              maxLength={255}
              value={name}
              onValue={setName}
            />
            <FormError error={formLevelError(error, ['name'])} />
            <FormButtons
              small
              label="Save"
              busy={busy}
              onCancel={() => {
                setRenaming(false);
                setName(service.name);
                setError(null);
              }}
            />
          </form>
        ) : (
          service.name
        )}
      </th>
      <td>{shownOn.length ? shownOn.join(', ') : <span class="muted">no page</span>}</td>
      <td class="misc-actions-cell">
        <div class="misc-buttons">
          {!renaming ? (
            <button type="button" class="button-secondary misc-small" onClick={() => setRenaming(true)}>
              Rename<span class="visually-hidden"> {service.name}</span>
            </button>
          ) : null}
          <ConfirmButton
            small
            label={
              <>
                Delete<span class="visually-hidden"> {service.name}</span>
              </>
            }
            question={
              <>
                Delete the service <strong>{service.name}</strong>? Incidents that list it lose the link. A
                service a card still shows cannot be deleted.
              </>
            }
            confirmLabel="Delete service"
            describeError={describeError}
            onConfirm={async () => {
              await api.delete(path);
              onChanged();
            }}
          />
        </div>
      </td>
    </tr>
  );
}
