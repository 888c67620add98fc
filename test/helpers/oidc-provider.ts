import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A person the test provider knows: the claims it gives for them. */
export type ProviderPerson = { email: string; email_verified: boolean; name?: string; groups?: string[] };

/** A real OpenID provider (oidc-provider) on loopback, for the single sign-on tests. */
export type TestProvider = {
  /** Its issuer URL, `http://127.0.0.1:<port>`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The people it signs in, by their `sub` (the dev login page's "login"); change them between tests. */
  people: Map<string, ProviderPerson>;
  close(): Promise<void>;
};

/**
 * Starts oidc-provider v9 on 127.0.0.1 with one confidential client (client_secret_basic) whose only
 * redirect URI is `redirectUri`, PKCE required, and its development login and consent pages
 * (`devInteractions`): any login name signs in as that `sub`. Claims: `email`, `email_verified`, `name`,
 * `name` and `groups` (scope `profile`).
 */
export async function startTestProvider(options: {
  redirectUris: string[];
  clientSecret: string;
}): Promise<TestProvider> {
  const people = new Map<string, ProviderPerson>();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'outpost-test',
        client_secret: options.clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    scopes: ['openid', 'email', 'profile'],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      // As Authentik gives them: the groups with the profile.
      profile: ['name', 'groups'],
    },
    cookies: { keys: ['outpost-test-provider-cookie-key'] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, sub) {
      const person = people.get(sub);
      if (!person) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...person }) };
    },
  });
  // The dev pages warn on every start; the tests know.
  provider.on('server_error', () => {});
  server.on('request', provider.callback());
  return {
    issuer,
    clientId: 'outpost-test',
    clientSecret: options.clientSecret,
    people,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
