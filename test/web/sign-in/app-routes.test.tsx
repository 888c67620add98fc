import { render, screen } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { App } from '../../../app/src/app.js';
import { serveApi, visit } from '../dom.js';

// The app's signed-out routing in a real DOM against a loopback API: every address shows the sign-in form
// but the three pages of the emailed links and the reset request, which show whether or not a session is
// there, and without waiting for it.

serveApi(() => ({
  'GET /auth/session': {
    status: 401,
    body: {
      statusCode: 401,
      error: 'Unauthorized',
      message: 'no session',
      attributes: { code: 'OUTPOST_ERR_UNAUTHORIZED' },
    },
  },
  'GET /auth/invitations/tok': { status: 200, body: { email: 'grace@example.com', accountName: 'Shop' } },
}));

describe('the app signed out', () => {
  it('shows the sign-in form at an address of the account, keeping the address', async () => {
    visit('/settings/people');
    render(<App />);
    await screen.findByRole('heading', { level: 1, name: 'Sign in to Outpost' });
    expect(window.location.pathname).toBe('/settings/people');
  });

  it.each([
    ['/forgot-password', 'Reset your password'],
    ['/reset-password#token=tok', 'Choose a new password'],
    ['/accept-invitation#token=tok', 'Join an account'],
  ])('shows %s itself', async (path, heading) => {
    visit(path);
    render(<App />);
    expect(screen.getByRole('heading', { level: 1, name: heading })).toBeTruthy();
    expect(screen.queryByRole('heading', { name: 'Sign in to Outpost' })).toBeNull();
    expect(window.location.hash).toBe('');
  });
});
