import { fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import type { SessionInfo } from '../../../app/src/api/session.js';
import type { User } from '../../../app/src/api/users.js';
import SettingsPage from '../../../app/src/settings/page.js';
import { SessionContext } from '../../../app/src/ui/permissions.js';
import { renderRoute, serveApi, validationError } from '../dom.js';
import { choose, field, type } from '../forms.js';

// Settings → People in a real DOM against a loopback API: the list with each person's role, status,
// two-factor and last sign-in; what an admin may do (invite up to their role, change roles, remove, sign
// out) and what a read-only session does not see; the invitation link when no email could be sent.

function person(fields: Partial<User>): User {
  return {
    id: 'u-x',
    email: 'x@example.com',
    name: 'X',
    role: 'READ_ONLY',
    status: 'ACTIVE',
    twoFactorEnabled: false,
    sso: false,
    createdAt: '2026-01-01T00:00:00.000Z',
    lastSignInAt: null,
    ...fields,
  };
}

const PEOPLE: User[] = [
  person({ id: 'u-owner', email: 'olga@example.com', name: 'Olga', role: 'OWNER', twoFactorEnabled: true }),
  person({
    id: 'u-admin',
    email: 'ada@example.com',
    name: 'Ada',
    role: 'ADMIN',
    lastSignInAt: new Date().toISOString(),
  }),
  person({ id: 'u-dev', email: 'dev@example.com', name: 'Dev', role: 'READ_WRITE', twoFactorEnabled: true }),
  person({ id: 'u-inv', email: 'new@example.com', name: '', status: 'INVITED' }),
];

function session(role: SessionInfo['role'], userId = 'u-admin'): SessionInfo {
  return {
    accountId: 'acc-1',
    accountName: 'Shop',
    csrfToken: 'csrf-1',
    expiresAt: '2026-12-24T07:30:00.000Z',
    keyPrefix: null,
    user: { id: userId, name: 'Ada', email: 'ada@example.com' },
    role,
  };
}

const api = serveApi(() => ({
  'GET /v1/users': { status: 200, body: PEOPLE },
  'POST /v1/users/invitations': (r) => {
    const body = r.body as { email: string; role: string };
    if (body.email === 'ada@example.com')
      return {
        status: 409,
        body: {
          statusCode: 409,
          error: 'Conflict',
          message: 'ada@example.com is already a person of the account',
          attributes: { code: 'OUTPOST_ERR_EMAIL_TAKEN' },
        },
      };
    return { status: 201, body: person({ id: 'u-new', email: body.email, status: 'INVITED', name: '' }) };
  },
  'PUT /v1/users/u-dev': { status: 200, body: PEOPLE[2] },
  'DELETE /v1/users/u-dev': { status: 204 },
  'POST /v1/users/u-dev/sessions/revoke': { status: 204 },
  'DELETE /v1/users/u-dev/two-factor': { status: 204 },
}));

function renderPeople(s: SessionInfo | null) {
  return renderRoute(
    '/settings/people',
    <SessionContext.Provider value={s}>
      <SettingsPage section="people" />
    </SessionContext.Provider>,
  );
}

/** The row of the person named `name`. */
async function row(name: string): Promise<HTMLElement> {
  const table = await screen.findByRole('table', { name: 'People' });
  return within(table)
    .getAllByRole('row')
    .find((r) => within(r).queryByRole('rowheader')?.textContent?.startsWith(name))!;
}

describe('Settings → People', () => {
  it('lists each person with email, role, status, two-factor and last sign-in', async () => {
    renderPeople(session('ADMIN'));
    const ada = await row('Ada');
    expect(ada.textContent).toContain('ada@example.com');
    expect(ada.textContent).toContain('Admin');
    expect(ada.textContent).toContain('Active');
    expect(ada.textContent).toContain('You');
    expect(ada.textContent).toMatch(/now|second|minute/);
    const olga = await row('Olga');
    expect(within(olga).getByText('On')).toBeTruthy();
    expect(olga.textContent).toContain('Never');
    const invited = await row('Not chosen yet');
    expect(invited.textContent).toContain('Invited');
    expect(invited.textContent).toContain('new@example.com');
    expect(screen.getByRole('navigation', { name: 'Settings' }).textContent).toContain('People');
  });

  it('shows a read-only session no invitation and no actions', async () => {
    renderPeople(session('READ_ONLY'));
    await row('Ada');
    expect(screen.queryByRole('button', { name: 'Invite someone' })).toBeNull();
    expect(screen.queryByRole('columnheader', { name: 'Actions' })).toBeNull();
    expect(screen.queryByRole('button', { name: /Remove/ })).toBeNull();
  });

  it('invites with a role up to the admin’s own; an owner cannot be invited by an admin', async () => {
    renderPeople(session('ADMIN'));
    fireEvent.click(await screen.findByRole('button', { name: 'Invite someone' }));
    const form = screen.getByRole('form', { name: 'Invite someone' });
    const roles = within(form)
      .getAllByRole('option')
      .map((o) => (o as HTMLOptionElement).value);
    expect(roles).toEqual(['READ_ONLY', 'READ_WRITE', 'ADMIN']);
    type('Email', 'ada@example.com');
    fireEvent.click(within(form).getByRole('button', { name: 'Send invitation' }));
    await waitFor(() => expect(field('Email').getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByRole('alert').textContent).toContain('already a person of the account');

    type('Email', 'grace@example.com');
    choose('Role', 'READ_WRITE');
    fireEvent.click(within(form).getByRole('button', { name: 'Send invitation' }));
    await screen.findByText('Invited grace@example.com: the invitation is emailed.');
    expect(api.requests('POST /v1/users/invitations').at(-1)!.body).toEqual({
      email: 'grace@example.com',
      role: 'READ_WRITE',
    });
    expect(screen.queryByLabelText(/Invitation link/)).toBeNull();
  });

  it('shows the invitation link when the service could send no email', async () => {
    api.route({
      'POST /v1/users/invitations': {
        status: 201,
        body: {
          ...person({ id: 'u-new', email: 'grace@example.com', status: 'INVITED' }),
          invitationUrl: 'http://localhost:3000/accept-invitation#token=tok',
        },
      },
    });
    renderPeople(session('OWNER', 'u-owner'));
    fireEvent.click(await screen.findByRole('button', { name: 'Invite someone' }));
    expect(
      within(screen.getByRole('form', { name: 'Invite someone' }))
        .getAllByRole('option')
        .map((o) => (o as HTMLOptionElement).value),
    ).toContain('OWNER');
    type('Email', 'grace@example.com');
    fireEvent.click(screen.getByRole('button', { name: 'Send invitation' }));
    const link = (await screen.findByLabelText('Invitation link for grace@example.com')) as HTMLInputElement;
    expect(link.value).toBe('http://localhost:3000/accept-invitation#token=tok');
    fireEvent.click(screen.getByRole('button', { name: 'Done' }));
    expect(screen.queryByLabelText('Invitation link for grace@example.com')).toBeNull();
  });

  it('shows a 400 naming role at the role field', async () => {
    api.route({ 'POST /v1/users/invitations': validationError('body.role is above yours', 'role') });
    renderPeople(session('ADMIN'));
    fireEvent.click(await screen.findByRole('button', { name: 'Invite someone' }));
    type('Email', 'grace@example.com');
    fireEvent.click(screen.getByRole('button', { name: 'Send invitation' }));
    await waitFor(() => expect(field('Role').getAttribute('aria-invalid')).toBe('true'));
  });

  it('changes a role, signs a person out everywhere and removes them', async () => {
    renderPeople(session('ADMIN'));
    const dev = await row('Dev');
    choose('Role of Dev', 'ADMIN', dev);
    fireEvent.click(within(dev).getByRole('button', { name: 'Change role of Dev' }));
    await screen.findByText('Dev is now admin.');
    expect(api.requests('PUT /v1/users/u-dev')[0]!.body).toEqual({ role: 'ADMIN' });

    fireEvent.click(within(dev).getByRole('button', { name: 'Sign out Dev everywhere' }));
    fireEvent.click(screen.getByRole('button', { name: 'End sessions' }));
    await screen.findByText('Signed Dev out everywhere.');
    expect(api.requests('POST /v1/users/u-dev/sessions/revoke')).toHaveLength(1);

    fireEvent.click(within(await row('Dev')).getByRole('button', { name: 'Remove Dev' }));
    fireEvent.click(screen.getByRole('button', { name: 'Remove' }));
    await screen.findByText('Removed Dev.');
    expect(api.requests('DELETE /v1/users/u-dev')).toHaveLength(1);
  });

  it('gives an admin no action on an owner or on themselves, and only an owner turns off someone’s two-factor', async () => {
    renderPeople(session('ADMIN'));
    const olga = await row('Olga');
    expect(within(olga).queryAllByRole('button')).toEqual([]);
    expect(olga.textContent).toContain('Only an owner changes an owner');
    const ada = await row('Ada');
    expect(within(ada).queryAllByRole('button')).toEqual([]);
    expect(within(ada).getByRole('link', { name: 'My account' })).toBeTruthy();
    expect(within(await row('Dev')).queryByRole('button', { name: /Turn off two-factor/ })).toBeNull();
  });

  it('lets an owner turn off the two-factor of someone who lost their device', async () => {
    renderPeople(session('OWNER', 'u-owner'));
    const dev = await row('Dev');
    fireEvent.click(within(dev).getByRole('button', { name: 'Turn off two-factor of Dev' }));
    fireEvent.click(screen.getByRole('button', { name: 'Turn off two-factor' }));
    await screen.findByText('Turned off the two-factor authentication of Dev.');
    expect(api.requests('DELETE /v1/users/u-dev/two-factor')).toHaveLength(1);
  });
});
