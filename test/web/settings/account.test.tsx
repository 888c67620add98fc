import { fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import type { SessionInfo } from '../../../app/src/api/session.js';
import type { User } from '../../../app/src/api/users.js';
import { describeUserAgent } from '../../../app/src/settings/account.js';
import SettingsPage from '../../../app/src/settings/page.js';
import { SessionContext } from '../../../app/src/ui/permissions.js';
import { renderRoute, serveApi, validationError } from '../dom.js';
import { field, type } from '../forms.js';

// Settings → My account in a real DOM against a loopback API: changing the password, two-factor
// enrolment (QR code, secret, confirmation, the ten recovery codes shown once), turning it off, the
// person's sessions, and a session opened with an API key, which has no account of its own.

const SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const CODES = Array.from({ length: 10 }, (_, i) => `rc${i}-abcd-efgh`);

function me(fields: Partial<User> = {}): User {
  return {
    id: 'u-1',
    email: 'ada@example.com',
    name: 'Ada',
    role: 'ADMIN',
    status: 'ACTIVE',
    twoFactorEnabled: false,
    sso: false,
    createdAt: '2026-01-01T00:00:00.000Z',
    lastSignInAt: '2026-11-01T00:00:00.000Z',
    ...fields,
  };
}

const SESSION: SessionInfo = {
  accountId: 'acc-1',
  accountName: 'Shop',
  csrfToken: 'csrf-1',
  expiresAt: '2026-12-24T07:30:00.000Z',
  keyPrefix: null,
  user: { id: 'u-1', name: 'Ada', email: 'ada@example.com' },
  role: 'ADMIN',
};

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SAFARI =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';

let twoFactorOn = false;

const api = serveApi(() => {
  twoFactorOn = false;
  return {
    'GET /v1/users/me': () => ({ status: 200, body: me({ twoFactorEnabled: twoFactorOn }) }),
    'PUT /v1/users/me/password': (r) =>
      (r.body as { currentPassword: string }).currentPassword === 'the old passphrase'
        ? { status: 204 }
        : validationError('body.currentPassword is not your password', 'currentPassword'),
    'POST /v1/users/me/two-factor': {
      status: 200,
      body: {
        secret: SECRET,
        otpauthUrl: `otpauth://totp/Outpost:ada%40example.com?secret=${SECRET}&issuer=Outpost`,
      },
    },
    'POST /v1/users/me/two-factor/confirm': (r) => {
      if ((r.body as { code: string }).code !== '123456')
        return validationError('body.code is not a current code', 'code');
      twoFactorOn = true;
      return { status: 200, body: { recoveryCodes: CODES } };
    },
    'DELETE /v1/users/me/two-factor': (r) => {
      const body = r.body as { password: string; code: string };
      if (body.password !== 'the old passphrase')
        return validationError('body.password is not your password', 'password');
      twoFactorOn = false;
      return { status: 204 };
    },
    'GET /v1/users/me/sessions': {
      status: 200,
      body: [
        {
          id: 's-1',
          current: true,
          userAgent: FIREFOX,
          createdAt: '2026-11-01T00:00:00.000Z',
          lastSeenAt: new Date().toISOString(),
          expiresAt: '2026-12-01T00:00:00.000Z',
        },
        {
          id: 's-2',
          current: false,
          userAgent: SAFARI,
          createdAt: '2026-11-02T00:00:00.000Z',
          lastSeenAt: '2026-11-03T00:00:00.000Z',
          expiresAt: '2026-12-02T00:00:00.000Z',
        },
      ],
    },
    'DELETE /v1/users/me/sessions/s-2': { status: 204 },
  };
});

function renderAccount(session: SessionInfo = SESSION) {
  return renderRoute(
    '/settings/account',
    <SessionContext.Provider value={session}>
      <SettingsPage section="account" />
    </SessionContext.Provider>,
  );
}

describe('Settings → My account', () => {
  it('says who is signed in and changes the password (the current one checked by the service)', async () => {
    renderAccount();
    expect((await screen.findByText(/Signed in as/)).textContent).toContain('ada@example.com');
    const form = screen.getByRole('form', { name: 'Change your password' });
    type('Current password', 'not it');
    type('New password', 'a new long passphrase');
    type('Confirm the password', 'a new long passphrase');
    fireEvent.click(within(form).getByRole('button', { name: 'Change password' }));
    await waitFor(() => expect(field('Current password').getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByRole('alert').textContent).toContain('This is not your current password.');

    type('Current password', 'the old passphrase');
    fireEvent.click(within(form).getByRole('button', { name: 'Change password' }));
    await screen.findByText('Password changed. Your other sessions have ended.');
    expect(api.requests('PUT /v1/users/me/password').at(-1)!.body).toEqual({
      currentPassword: 'the old passphrase',
      newPassword: 'a new long passphrase',
    });
    expect(field('Current password').value).toBe('');
    expect(field('New password').value).toBe('');
  });

  it('does not send a new password its confirmation does not match', async () => {
    renderAccount();
    await screen.findByRole('form', { name: 'Change your password' });
    type('Current password', 'the old passphrase');
    type('New password', 'a new long passphrase');
    type('Confirm the password', 'another long passphrase');
    fireEvent.click(screen.getByRole('button', { name: 'Change password' }));
    expect(screen.getByRole('alert').textContent).toContain('The two passwords are not the same.');
    expect(api.requests('PUT /v1/users/me/password')).toHaveLength(0);
  });

  it('turns two-factor on: QR code and secret, a wrong code refused, then ten recovery codes shown once', async () => {
    renderAccount();
    fireEvent.click(await screen.findByRole('button', { name: 'Turn on two-factor authentication' }));
    const qr = await screen.findByRole('img', { name: /QR code of the two-factor secret/ });
    expect(qr.tagName.toLowerCase()).toBe('svg');
    expect(qr.querySelector('path')!.getAttribute('d')!.length).toBeGreaterThan(500);
    expect(screen.getByText('JBSW Y3DP EHPK 3PXP JBSW Y3DP EHPK 3PXP')).toBeTruthy();

    type('The 6-digit code the app shows', '000000');
    fireEvent.click(screen.getByRole('button', { name: 'Turn on' }));
    await waitFor(() =>
      expect(field('The 6-digit code the app shows').getAttribute('aria-invalid')).toBe('true'),
    );
    expect(screen.getByRole('alert').textContent).toContain('This code is not right.');

    type('The 6-digit code the app shows', '123456');
    fireEvent.click(screen.getByRole('button', { name: 'Turn on' }));
    const list = await screen.findByRole('list', { name: 'Recovery codes' });
    expect(
      within(list)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(CODES);
    expect(screen.queryByText(/JBSW Y3DP/)).toBeNull();
    expect(screen.getByRole('button', { name: 'Download' })).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Done, I saved them' }));
    expect(screen.queryByRole('list', { name: 'Recovery codes' })).toBeNull();
    await screen.findByText('Two-factor authentication is on.');
    await screen.findByRole('button', { name: 'Turn off two-factor authentication' });
    expect(document.body.textContent).not.toContain(CODES[0]);
  });

  it('turns two-factor off with the password and a code', async () => {
    twoFactorOn = true;
    renderAccount();
    fireEvent.click(await screen.findByRole('button', { name: 'Turn off two-factor authentication' }));
    const form = screen.getByRole('form', { name: 'Turn off two-factor authentication' });
    type('Your password', 'wrong');
    type('Code of your authenticator app, or a recovery code', '123456');
    fireEvent.click(within(form).getByRole('button', { name: 'Turn off' }));
    expect((await screen.findByRole('alert')).textContent).toContain('This is not your password.');
    type('Your password', 'the old passphrase');
    type('Code of your authenticator app, or a recovery code', '123 456');
    fireEvent.click(within(form).getByRole('button', { name: 'Turn off' }));
    await screen.findByText('Two-factor authentication is off.');
    expect(api.requests('DELETE /v1/users/me/two-factor').at(-1)!.body).toEqual({
      password: 'the old passphrase',
      code: '123456',
    });
    await screen.findByRole('button', { name: 'Turn on two-factor authentication' });
  });

  it('lists the sessions, this browser marked, and ends another', async () => {
    renderAccount();
    const table = await screen.findByRole('table', { name: 'Your sessions' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows[0]!.textContent).toContain('Firefox on Linux');
    expect(rows[0]!.textContent).toContain('This browser');
    expect(within(rows[0]!).queryByRole('button')).toBeNull();
    expect(rows[1]!.textContent).toContain('Safari on iOS');
    fireEvent.click(within(rows[1]!).getByRole('button', { name: /^End the session of Safari on iOS/ }));
    fireEvent.click(screen.getByRole('button', { name: 'End session' }));
    await screen.findByText('Ended the session of Safari on iOS.');
    expect(api.requests('DELETE /v1/users/me/sessions/s-2')).toHaveLength(1);
  });

  it('says a session opened with an API key has no account of its own, and leaves its tab out', async () => {
    api.route({
      'GET /v1/users/me': {
        status: 409,
        body: {
          statusCode: 409,
          error: 'Conflict',
          message: 'this session is no person’s',
          attributes: { code: 'OUTPOST_ERR_NOT_A_USER' },
        },
      },
    });
    renderAccount({ ...SESSION, user: null, keyPrefix: 'op_3f9a' });
    await screen.findByText(/signed in with an API key, which belongs to no person/);
    expect(screen.queryByRole('form', { name: 'Change your password' })).toBeNull();
    const tabs = within(screen.getByRole('navigation', { name: 'Settings' })).getAllByRole('link');
    expect(tabs.map((t) => t.textContent)).not.toContain('My account');
    expect(tabs.map((t) => t.textContent)).toContain('People');
  });

  it('describes user agents in a few words', () => {
    expect(describeUserAgent(FIREFOX)).toBe('Firefox on Linux');
    expect(describeUserAgent(SAFARI)).toBe('Safari on iOS');
    expect(describeUserAgent(null)).toBe('Unknown browser');
    expect(describeUserAgent('curl/8.5.0')).toBe('curl/8.5.0');
  });
});
