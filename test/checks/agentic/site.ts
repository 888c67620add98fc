import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Loopback, serve } from '../../browser/runner-harness.js';

/**
 * The test site of agentic checks, on loopback: a sign-in form whose markup changes between runs
 * (`variant`): `v1` has a "Sign in" button; `v2` relabels it "Log in" (a script's locator no longer
 * matches: a repair's case); `content` keeps v2's markup but the dashboard no longer greets the user (a
 * genuine failure of the check's assertion). The form only signs in with `password`.
 */
export type AgenticSite = Loopback & { variant: 'v1' | 'v2' | 'content'; logins: number };

export async function startSite(user: string, password: string): Promise<AgenticSite> {
  const site = { variant: 'v1', logins: 0 } as AgenticSite;
  const html = (res: ServerResponse, body: string, status = 200) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>Outpost test shop</title></head><body>${body}</body></html>`);
  };
  const loopback = await serve((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && url.pathname === '/login') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        if (form.get('user') === user && form.get('pass') === password) {
          site.logins++;
          res.writeHead(303, { location: '/dashboard' });
          res.end();
        } else html(res, '<h1>Wrong user name or password</h1>', 401);
      });
      return;
    }
    if (url.pathname === '/login') {
      const label = site.variant === 'v1' ? 'Sign in' : 'Log in';
      html(
        res,
        `<h1>Sign in to the shop</h1><form method="post" action="/login">
          <label>Username <input name="user"></label>
          <label>Password <input name="pass" type="password"></label>
          <button type="submit">${label}</button></form>`,
      );
      return;
    }
    if (url.pathname === '/dashboard') {
      html(
        res,
        site.variant === 'content'
          ? '<h1>Dashboard</h1><p>Hello, stranger</p>'
          : `<h1>Dashboard</h1><p>Welcome, ${user}</p>`,
      );
      return;
    }
    html(res, '<h1>Not found</h1>', 404);
  });
  return Object.assign(site, loopback);
}
