// A certified OpenID Connect authorization server (oidc-provider) for the tests, on loopback.
//
//   node provider.mjs --port <port> --resource <url> --scope <name> [--scope <name> ...]
//
// Issuer http://127.0.0.1:<port>. Clients register themselves (open dynamic registration)
// and must use PKCE; access tokens are RFC 9068 JWTs for the one resource server, <url>
// (the adapter), also when a client names no resource. Users sign in through the built-in
// development pages (any login name, any password, then consent); the login name is the
// subject. Prints `READY <issuer>` once listening; SIGTERM ends it.

import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

import Provider, { errors } from 'oidc-provider';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    resource: { type: 'string' },
    scope: { type: 'string', multiple: true, default: [] },
  },
});
if (!values.port || !values.resource) {
  console.error('usage: node provider.mjs --port <port> --resource <url> --scope <name>...');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${values.port}`;
const resource = values.resource;
const resourceScopes = values.scope;

// Fresh keys every start: nothing to leak, and the adapter must fetch them from the JWKS.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };

const provider = new Provider(issuer, {
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  scopes: ['openid', 'offline_access', ...resourceScopes],
  pkce: { methods: ['S256'], required: () => true },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true }, // open: no initial access token
    resourceIndicators: {
      enabled: true,
      // A client that names no resource (a chat bridge reading only the card) gets the adapter.
      defaultResource: (_ctx, _client, oneOf) => oneOf ?? resource,
      // The refresh grant keeps the resource granted at sign-in.
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => {
        if (indicator !== resource) throw new errors.InvalidTarget();
        return {
          audience: resource,
          scope: resourceScopes.join(' '),
          accessTokenFormat: 'jwt', // RFC 9068: header typ at+jwt
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  // Any client allowed the refresh_token grant gets one, without asking for offline_access.
  issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
});

const server = provider.listen(Number(values.port), '127.0.0.1', () => {
  console.log(`READY ${issuer}`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
