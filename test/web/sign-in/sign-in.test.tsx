import { fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import type { SessionInfo } from '../../../app/src/api/session.js';
import AcceptInvitation from '../../../app/src/sign-in/accept-invitation.js';
import ForgotPassword from '../../../app/src/sign-in/forgot-password.js';
import SignIn from '../../../app/src/sign-in/page.js';
import ResetPassword from '../../../app/src/sign-in/reset-password.js';
import { serveApi, validationError, visit } from '../dom.js';
import { field, type } from '../forms.js';

// The pages of signing in, in a real DOM against a loopback API: email and password, the two-factor step
// (a code or a recovery code), an API key instead, asking for a password reset, and the reset and
// invitation links, whose token is taken from the fragment and removed from the address bar.

const SESSION: SessionInfo = {
  accountId: 'acc-1',
  accountName: 'Shop',
  csrfToken: 'csrf-1',
  expiresAt: '2026-12-24T07:30:00.000Z',
  keyPrefix: null,
  user: { id: 'u-1', name: 'Ada', email: 'ada@example.com' },
  role: 'ADMIN',
};

const unauthorized = (message: string) => ({
  status: 401,
  body: { statusCode: 401, error: 'Unauthorized', message, attributes: { code: 'OUTPOST_ERR_UNAUTHORIZED' } },
});

const api = serveApi(() => ({
  'POST /auth/session': (r) => {
    const body = r.body as Record<string, string>;
    if (body.apiKey === 'op_right') return { status: 200, body: SESSION };
    if (body.email === 'ada@example.com' && body.password === 'correct horse battery')
      return { status: 200, body: SESSION };
    if (body.email === 'grace@example.com' && body.password === 'correct horse battery')
      return { status: 200, body: { twoFactorRequired: true, challenge: 'ch-1' } };
    return unauthorized('wrong email or password');
  },
  'POST /auth/session/two-factor': (r) => {
    const body = r.body as Record<string, string>;
    return body.challenge === 'ch-1' && (body.code === '123456' || body.code === 'abcd-efgh')
      ? { status: 200, body: SESSION }
      : unauthorized('wrong code');
  },
  'POST /auth/password-reset': { status: 202, body: {} },
  'POST /auth/password-reset/confirm': (r) =>
    (r.body as { token: string }).token === 'reset-token'
      ? { status: 204 }
      : validationError('body.token is not a live token', 'token'),
  'GET /auth/invitations/inv-token': {
    status: 200,
    body: { email: 'grace@example.com', accountName: 'Shop' },
  },
  'POST /auth/invitations/accept': { status: 200, body: SESSION },
}));

function renderSignIn() {
  const signedIn: SessionInfo[] = [];
  render(<SignIn onSignedIn={(s) => signedIn.push(s)} />);
  return signedIn;
}

/** Fills the email and password form and sends it. */
function signInWith(email: string, password: string) {
  type('Email', email);
  type('Password', password);
  fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
}

describe('the sign-in page', () => {
  it('signs a person in with email and password, sent once and cleared from the field', async () => {
    const signedIn = renderSignIn();
    expect(screen.getByRole('link', { name: 'Forgot password?' }).getAttribute('href')).toBe(
      '/forgot-password',
    );
    signInWith('ada@example.com', 'correct horse battery');
    await waitFor(() => expect(signedIn).toEqual([SESSION]));
    expect(api.requests('POST /auth/session')[0]!.body).toEqual({
      email: 'ada@example.com',
      password: 'correct horse battery',
    });
    expect(field('Password').value).toBe('');
  });

  it('says "wrong email or password" at the fields, which are marked invalid', async () => {
    const signedIn = renderSignIn();
    signInWith('ada@example.com', 'not the password');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Wrong email or password.');
    expect(field('Password').getAttribute('aria-invalid')).toBe('true');
    expect(field('Password').getAttribute('aria-describedby')).toBe('sign-in-error');
    expect(document.activeElement).toBe(field('Password'));
    expect(signedIn).toEqual([]);
  });

  it('asks for nothing when a field is empty, and says what is missing', async () => {
    renderSignIn();
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Enter your email and your password.');
    expect(api.requests('POST /auth/session')).toHaveLength(0);
  });

  it('asks for the 6-digit code after the password when two-factor is on, then signs in', async () => {
    const signedIn = renderSignIn();
    signInWith('grace@example.com', 'correct horse battery');
    await screen.findByRole('heading', { name: 'Two-factor authentication' });
    expect(signedIn).toEqual([]);
    const code = field('6-digit code');
    expect(code.getAttribute('autocomplete')).toBe('one-time-code');
    expect(code.getAttribute('inputmode')).toBe('numeric');
    expect(document.activeElement).toBe(code);

    type('6-digit code', '654321');
    fireEvent.click(screen.getByRole('button', { name: 'Verify' }));
    expect((await screen.findByRole('alert')).textContent).toContain('This code is not valid.');
    expect(field('6-digit code').value).toBe('');

    type('6-digit code', '123 456');
    fireEvent.click(screen.getByRole('button', { name: 'Verify' }));
    await waitFor(() => expect(signedIn).toEqual([SESSION]));
    expect(api.requests('POST /auth/session/two-factor').at(-1)!.body).toEqual({
      challenge: 'ch-1',
      code: '123456',
    });
  });

  it('takes a recovery code instead, and "Start again" goes back to the password', async () => {
    const signedIn = renderSignIn();
    signInWith('grace@example.com', 'correct horse battery');
    await screen.findByRole('heading', { name: 'Two-factor authentication' });
    fireEvent.click(screen.getByRole('button', { name: 'Use a recovery code' }));
    type('Recovery code', 'wrong-code');
    fireEvent.click(screen.getByRole('button', { name: 'Verify' }));
    expect((await screen.findByRole('alert')).textContent).toContain('This recovery code is not valid');
    type('Recovery code', 'abcd-efgh');
    fireEvent.click(screen.getByRole('button', { name: 'Verify' }));
    await waitFor(() => expect(signedIn).toEqual([SESSION]));

    fireEvent.click(screen.getByRole('button', { name: 'Start again' }));
    expect(field('Email')).toBeTruthy();
  });

  it('signs in with an API key as the secondary way, and back to email and password', async () => {
    const signedIn = renderSignIn();
    expect(screen.queryByLabelText('API key')).toBeNull();
    type('Email', 'ada@example.com');
    fireEvent.click(screen.getByRole('button', { name: 'Sign in with an API key' }));
    // A field of its own: nothing typed into the email field is carried over.
    expect(field('API key').value).toBe('');
    type('API key', 'op_wrong');
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toContain('This API key is not valid.');
    expect(field('API key').value).toBe('');
    type('API key', 'op_right');
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(signedIn).toEqual([SESSION]));
    expect(api.requests('POST /auth/session').at(-1)!.body).toEqual({ apiKey: 'op_right' });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in with email and password' }));
    expect(field('Email')).toBeTruthy();
  });
});

describe('forgot password', () => {
  it('says to check the email, the same whatever the address', async () => {
    visit('/forgot-password');
    render(<ForgotPassword />);
    type('Email', 'nobody@example.com');
    fireEvent.click(screen.getByRole('button', { name: 'Email me a link' }));
    const done = await screen.findByRole('status');
    expect(done.textContent).toContain('Check your email');
    expect(done.textContent).toContain('If nobody@example.com belongs to a person');
    expect(api.requests('POST /auth/password-reset')[0]!.body).toEqual({ email: 'nobody@example.com' });
  });

  it('refuses what is not an email without a request', () => {
    render(<ForgotPassword />);
    type('Email', 'nobody');
    fireEvent.click(screen.getByRole('button', { name: 'Email me a link' }));
    expect(screen.getByRole('alert').textContent).toContain('Enter the email you sign in with.');
    expect(api.requests('POST /auth/password-reset')).toHaveLength(0);
  });
});

describe('the reset link', () => {
  it('takes the token from the fragment and removes it from the address bar at once', () => {
    visit('/reset-password#token=reset-token');
    render(<ResetPassword />);
    expect(window.location.href).toBe(`${window.location.origin}/reset-password`);
    expect(window.location.hash).toBe('');
  });

  it('checks the password and its confirmation before sending them with the token', async () => {
    visit('/reset-password#token=reset-token');
    render(<ResetPassword />);
    type('New password', 'short');
    type('Confirm the password', 'short');
    fireEvent.click(screen.getByRole('button', { name: 'Set the password' }));
    expect(screen.getByRole('alert').textContent).toContain('Use at least 12 characters.');
    type('New password', 'a long enough passphrase');
    type('Confirm the password', 'a long enough passphrasf');
    fireEvent.click(screen.getByRole('button', { name: 'Set the password' }));
    expect(screen.getByRole('alert').textContent).toContain('The two passwords are not the same.');
    expect(field('Confirm the password').getAttribute('aria-invalid')).toBe('true');
    expect(api.requests('POST /auth/password-reset/confirm')).toHaveLength(0);

    type('Confirm the password', 'a long enough passphrase');
    fireEvent.click(screen.getByRole('button', { name: 'Set the password' }));
    expect((await screen.findByRole('status')).textContent).toContain('Your password is changed');
    expect(api.requests('POST /auth/password-reset/confirm')[0]!.body).toEqual({
      token: 'reset-token',
      password: 'a long enough passphrase',
    });
  });

  it('says a used or expired link does not work, with a link to ask again', async () => {
    visit('/reset-password#token=used-token');
    render(<ResetPassword />);
    type('New password', 'a long enough passphrase');
    type('Confirm the password', 'a long enough passphrase');
    fireEvent.click(screen.getByRole('button', { name: 'Set the password' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('This link does not work any more');
    expect(screen.getByRole('link', { name: 'Ask for a new link' }).getAttribute('href')).toBe(
      '/forgot-password',
    );
  });

  it('without a token, says so at once', () => {
    visit('/reset-password');
    render(<ResetPassword />);
    expect(screen.getByRole('alert').textContent).toContain('This link does not work any more');
    expect(screen.queryByLabelText('New password')).toBeNull();
  });
});

describe('the invitation link', () => {
  function renderAccept(path: string) {
    visit(path);
    const signedIn: SessionInfo[] = [];
    render(<AcceptInvitation onSignedIn={(s) => signedIn.push(s)} />);
    return signedIn;
  }

  it('names the account and the email, then joins with a name and a password', async () => {
    const signedIn = renderAccept('/accept-invitation#token=inv-token');
    expect(window.location.hash).toBe('');
    const form = await screen.findByRole('form', { name: 'Join the account' });
    expect(form.textContent).toContain('Shop');
    expect(form.textContent).toContain('grace@example.com');
    fireEvent.click(screen.getByRole('button', { name: 'Join the account' }));
    expect(screen.getAllByRole('alert').map((a) => a.textContent)).toEqual([
      '✕ Enter your name.',
      '✕ Use at least 12 characters.',
    ]);
    type('Your name', 'Grace Hopper');
    type('Password', 'a long enough passphrase');
    type('Confirm the password', 'a long enough passphrase');
    fireEvent.click(screen.getByRole('button', { name: 'Join the account' }));
    await waitFor(() => expect(signedIn).toEqual([SESSION]));
    expect(api.requests('POST /auth/invitations/accept')[0]!.body).toEqual({
      token: 'inv-token',
      name: 'Grace Hopper',
      password: 'a long enough passphrase',
    });
  });

  it('says an invitation that is used, withdrawn or expired does not work', async () => {
    renderAccept('/accept-invitation#token=old-token');
    expect((await screen.findByRole('alert')).textContent).toContain(
      'This invitation does not work any more',
    );
    expect(screen.queryByLabelText('Password')).toBeNull();
  });

  it('reads a link pasted into the same tab (only the fragment changes)', async () => {
    renderAccept('/accept-invitation#token=old-token');
    await screen.findByText('This invitation does not work any more');
    window.history.replaceState(null, '', '/accept-invitation#token=inv-token');
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    await screen.findByRole('form', { name: 'Join the account' });
    expect(window.location.hash).toBe('');
  });

  it('says a link without its token is incomplete', () => {
    renderAccept('/accept-invitation');
    expect(screen.getByRole('alert').textContent).toContain('This link is incomplete');
    expect(api.requests('GET /auth/invitations/old-token')).toHaveLength(0);
  });
});
