/**
 * Creating and editing a status page: name, address, access, look and its cards of services.
 */
import { useState } from 'preact/hooks';
import { createStatusPage, updateStatusPage } from '../api/status-pages.js';
import { FormError, TextAreaField, TextField } from '../ui/forms.js';
import { ServicePicker } from './service-picker.js';
import type { ServiceView, StatusPage } from '../api/schemas.js';
import { Checkbox, errorOf, FormButtons, formLevelError, slugOf } from '../ui/widgets.js';
import { Loading } from '../ui/page.js';
import { LOOK_FIELDS, LookFields, lookBody, lookOf } from './page-look.js';

let nextCardKey = 1;

/** A card while the form edits it: `key` tells cards apart in the form, `id` keeps an existing card. */
type CardDraft = { key: number; id?: string; name: string; services: Set<string> };
/** The drafts of a page's cards; a new page starts with one empty card named Services. */
function draftsOf(page: StatusPage | undefined): CardDraft[] {
  return page
    ? page.cards.map((c) => ({
        key: nextCardKey++,
        id: c.id,
        name: c.name,
        services: new Set(c.services.map((s) => s.id)),
      }))
    : [{ key: nextCardKey++, name: 'Services', services: new Set<string>() }];
}

/** The cards as the API takes them (an existing card keeps its id). */
function cardsBody(cards: CardDraft[]) {
  return cards.map((c) => ({
    ...(c.id ? { id: c.id } : {}),
    name: c.name.trim(),
    services: [...c.services].map((id) => ({ id })),
  }));
}

/**
 * Create (no `page`) or edit a status page: name, url, description, private, its look and address (theme,
 * colours, logo, favicon, custom domain: page-look.tsx), and its cards.
 */
export function PageForm({
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
  const [cards, setCards] = useState<CardDraft[]>(() => draftsOf(page));
  const [look, setLook] = useState(() => lookOf(page));
  // The page as last answered (a Check now of its domain answers it again).
  const [current, setCurrent] = useState(page);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const body = {
      name: name.trim(),
      url: url.trim(),
      description: description.trim() ? description.trim() : null,
      isPrivate,
      ...lookBody(look),
      cards: cardsBody(cards),
    };
    try {
      const saved = page ? await updateStatusPage(page.id, body) : await createStatusPage(body);
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
      <AddressField
        url={url}
        error={errorOf(error, 'url')}
        onUrl={(value) => {
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
      <LookFields page={current} look={look} setLook={setLook} error={error} onDomainChecked={setCurrent} />
      <CardsFieldset cards={cards} setCards={setCards} services={services} error={error} />
      <FormError
        error={formLevelError(error, [
          'name',
          'url',
          'description',
          ...LOOK_FIELDS,
          ...cards.flatMap((_, i) => [`cards[${i}].name`, `cards[${i}].services`]),
        ])}
      />
      <FormButtons label={page ? 'Save' : 'Create status page'} busy={busy} onCancel={onCancel} />
    </form>
  );
}

/** The page's cards: each with its name, services and buttons to move or remove it; and Add card. */
function CardsFieldset({
  cards,
  setCards,
  services,
  error,
}: {
  cards: CardDraft[];
  setCards: (cards: CardDraft[]) => void;
  services: readonly ServiceView[] | undefined;
  error: unknown;
}) {
  const setCard = (key: number, patch: Partial<CardDraft>) =>
    setCards(cards.map((c) => (c.key === key ? { ...c, ...patch } : c)));
  const move = (index: number, by: number) => {
    const next = [...cards];
    const [card] = next.splice(index, 1);
    if (card) next.splice(index + by, 0, card);
    setCards(next);
  };
  return (
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
            <CardButtons
              index={i}
              count={cards.length}
              onMove={(by) => move(i, by)}
              onRemove={() => setCards(cards.filter((c) => c.key !== card.key))}
            />
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
  );
}

/** Move up, Move down and Remove of card `index`. */
function CardButtons({
  index: i,
  count,
  onMove,
  onRemove,
}: {
  index: number;
  count: number;
  onMove: (by: number) => void;
  onRemove: () => void;
}) {
  return (
    <div class="misc-buttons">
      <button type="button" class="button-secondary misc-small" disabled={i === 0} onClick={() => onMove(-1)}>
        Move up<span class="visually-hidden"> card {i + 1}</span>
      </button>
      <button
        type="button"
        class="button-secondary misc-small"
        disabled={i === count - 1}
        onClick={() => onMove(1)}
      >
        Move down<span class="visually-hidden"> card {i + 1}</span>
      </button>
      <button type="button" class="button-danger misc-small" onClick={onRemove}>
        Remove card {i + 1}
      </button>
    </div>
  );
}

/** The page's address (`/status/{url}`). */
function AddressField({
  url,
  error,
  onUrl,
}: {
  url: string;
  error: string | undefined;
  onUrl: (value: string) => void;
}) {
  return (
    <TextField
      label="Address"
      hint={
        <>
          The page answers at <code>/status/{url || '…'}</code>: lower-case letters, digits and hyphens,
          unique in the account.
        </>
      }
      error={error}
      required
      maxLength={63}
      spellcheck={false}
      value={url}
      onValue={onUrl}
    />
  );
}
