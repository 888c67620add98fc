import { useState } from 'preact/hooks';
import { listServices, listStatusPages } from '../api/status-pages.js';
import { ListStatus, OneTimeSecret } from '../ui/widgets.js';
import { PageHeader } from '../ui/page.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import './status-pages.css';
import { PageCard } from './page-card.js';
import { PageForm } from './page-form.js';
import { Services } from './services.js';
import { useCan } from '../ui/permissions.js';

/**
 * Status pages (`/status-pages`): the account's pages (name, url, public or private, cards and the services
 * each shows), each linking to its public page, and the status-page services that cards show and incidents
 * concern.
 */
export default function StatusPagesPage() {
  useTitle('Status pages');
  const pages = useLoad((signal) => listStatusPages(signal), []);
  const services = useLoad(listServices, []);
  const [creating, setCreating] = useState(false);
  const canWrite = useCan('write');
  const [editingId, setEditingId] = useState<string | null>(null);
  const [accessKey, setAccessKey] = useState<{ page: string; key: string } | null>(null);

  function reloadAll() {
    pages.reload();
    services.reload();
  }

  return (
    <>
      <PageHeader title="Status pages">
        {canWrite ? (
          <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
            {creating ? 'Close the form' : 'New status page'}
          </button>
        ) : null}
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

      {creating && canWrite ? (
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
          No status page yet.
          {canWrite ? (
            <>
              {' '}
              Add the services you want to show under <strong>Services</strong> below, then create a page with{' '}
              <strong>New status page</strong>.
            </>
          ) : null}
        </ListStatus>
        {pages.data && pages.data.length > 0 ? (
          <ul class="sp-pages">
            {pages.data.map((page) =>
              editingId === page.id && canWrite ? (
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
