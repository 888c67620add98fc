/**
 * The account's status-page services: adding, renaming and deleting them, and linking checks to them.
 */
import { useState } from 'preact/hooks';
import { listChecks } from '../api/checks.js';
import { ApiError } from '../api/client.js';
import { createService, deleteService, renameService, type ServiceWithChecks } from '../api/status-pages.js';
import { FormError, TextField } from '../ui/forms.js';
import type { Check, ServiceView, StatusPage } from '../api/schemas.js';
import { useLoad } from '../ui/hooks.js';
import { ConfirmButton, errorOf, FormButtons, formLevelError, ListStatus, messageOf } from '../ui/widgets.js';
import { CheckPicker } from './check-picker.js';
import { useCan } from '../ui/permissions.js';

/**
 * The status-page services: add, rename, delete (refused while a card shows the service), and the checks
 * linked to each (Link checks opens the picker under the service's row).
 */
export function Services({
  services,
  pages,
  onChanged,
}: {
  services: { data: ServiceWithChecks[] | undefined; error: Error | undefined };
  pages: readonly StatusPage[];
  onChanged: () => void;
}) {
  const checks = useLoad((signal) => listChecks(signal), []);
  const canWrite = useCan('write');
  const serviceNames = new Map((services.data ?? []).map((s) => [s.id, s.name]));
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
      await createService(name.trim());
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
        concern them; linked checks give them their state and their uptime.
      </p>
      {canWrite ? (
        <>
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
        </>
      ) : null}
      <ListStatus load={services} loading="Loading services" isEmpty={services.data?.length === 0}>
        No service yet.{canWrite ? ' Add the first one above, e.g. “Website” or “Public API”.' : ''}
      </ListStatus>
      {services.data && services.data.length > 0 ? (
        <div class="table-wrap">
          <table class="misc-table">
            <caption class="visually-hidden">Status-page services</caption>
            <thead>
              <tr>
                <th scope="col">Service</th>
                <th scope="col">Shown on</th>
                <th scope="col">Linked checks</th>
                {canWrite ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {services.data.map((service) => (
                <ServiceRow
                  key={service.id}
                  service={service}
                  shownOn={shownOn.get(service.id) ?? []}
                  pageNames={pageNames}
                  checks={checks.data}
                  serviceNames={serviceNames}
                  onChanged={onChanged}
                  onLinked={() => {
                    checks.reload();
                    onChanged();
                  }}
                />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

/** One service's row (name, pages, linked checks, actions) and, while open, its check picker's row. */
function ServiceRow({
  service,
  shownOn,
  pageNames,
  checks,
  serviceNames,
  onChanged,
  onLinked,
}: {
  service: ServiceWithChecks;
  shownOn: string[];
  pageNames: ReadonlyMap<string, string>;
  checks: readonly Check[] | undefined;
  serviceNames: ReadonlyMap<string, string>;
  onChanged: () => void;
  onLinked: () => void;
}) {
  const [picking, setPicking] = useState(false);
  const canWrite = useCan('write');
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(service.name);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function rename(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await renameService(service.id, name.trim());
      setRenaming(false);
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const pickerId = `sp-checks-${service.id}`;
  return (
    <>
      <tr>
        <th scope="row">
          {renaming && canWrite ? (
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
        <td>
          {service.checks.length ? (
            service.checks.map((c) => c.name).join(', ')
          ) : (
            <span class="muted">none: incidents only</span>
          )}
        </td>
        {canWrite ? (
          <td class="misc-actions-cell">
            <div class="misc-buttons">
              <button
                type="button"
                class="button-secondary misc-small"
                aria-expanded={picking}
                aria-controls={picking ? pickerId : undefined}
                onClick={() => setPicking(!picking)}
              >
                {picking ? 'Close' : 'Link checks'}
                <span class="visually-hidden"> of {service.name}</span>
              </button>
              {!renaming ? (
                <button type="button" class="button-secondary misc-small" onClick={() => setRenaming(true)}>
                  Rename<span class="visually-hidden"> {service.name}</span>
                </button>
              ) : null}
              <DeleteService service={service} pageNames={pageNames} onDeleted={onChanged} />
            </div>
          </td>
        ) : null}
      </tr>
      {picking && canWrite ? (
        <tr class="sp-picker-row">
          <td colSpan={4} id={pickerId}>
            <CheckPicker service={service} checks={checks} serviceNames={serviceNames} onChanged={onLinked} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** The 409 of a service a card still shows, naming the pages (the API names them by id). */
function deleteErrorOf(err: unknown, pageNames: ReadonlyMap<string, string>): string {
  const ids = err instanceof ApiError ? err.body?.attributes?.statusPageIds : undefined;
  if (err instanceof ApiError && err.status === 409 && Array.isArray(ids)) {
    const names = ids.map((id) => pageNames.get(String(id)) ?? String(id));
    return `It cannot be deleted: a card of ${names.length === 1 ? 'the status page' : 'the status pages'} ${names.join(', ')} shows it. Remove it from their cards first.`;
  }
  return messageOf(err);
}

/** Delete of one service, asked first; a 409 names the pages whose cards still show it. */
function DeleteService({
  service,
  pageNames,
  onDeleted,
}: {
  service: ServiceView;
  pageNames: ReadonlyMap<string, string>;
  onDeleted: () => void;
}) {
  return (
    <ConfirmButton
      small
      label={
        <>
          Delete<span class="visually-hidden"> {service.name}</span>
        </>
      }
      question={
        <>
          Delete the service <strong>{service.name}</strong>? Incidents that list it lose the link. A service
          a card still shows cannot be deleted.
        </>
      }
      confirmLabel="Delete service"
      describeError={(err) => deleteErrorOf(err, pageNames)}
      onConfirm={async () => {
        await deleteService(service.id);
        onDeleted();
      }}
    />
  );
}
