// A real OpenID Connect provider for the tests (the npm package
// `oidc-provider`, with its development sign-in form: any name and any
// password sign in as that name). Started by the end-to-end and browser
// tests of OpenID sign-in; never part of a deployment.
//
//   node tests/browser/oidc-provider.mjs <port> <client_id> <client_secret> <redirect_uri>...
//
// The issuer is http://localhost:<port>. Prints "ready <issuer>" once it
// listens. Each person's claims: sub = the name typed, preferred_username
// and name = the same.

import Provider from 'oidc-provider';

const [port, clientId, clientSecret, ...redirectUris] = process.argv.slice(2);
if (!port || !clientId || !clientSecret || redirectUris.length === 0) {
  console.error('usage: oidc-provider.mjs <port> <client_id> <client_secret> <redirect_uri>...');
  process.exit(2);
}
const issuer = `http://localhost:${port}`;
const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: redirectUris,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  pkce: { required: () => true },
  claims: { openid: ['sub'], profile: ['name', 'preferred_username'] },
  findAccount: (ctx, id) => ({
    accountId: id,
    claims: () => ({ sub: id, name: id, preferred_username: id }),
  }),
  cookies: { keys: ['spades-test-provider'] },
  // Whatever the client asked, a test's consent is given on the form.
  features: { devInteractions: { enabled: true } },
});
// Quiet: the tests read their own output.
provider.on('server_error', (ctx, err) => console.error('provider error:', err.message));
provider.listen(Number(port), '127.0.0.1', () => {
  console.log(`ready ${issuer}`);
});
