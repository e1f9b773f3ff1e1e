// A real OpenID provider (oidc-provider) for rypsok's OAuth tests, on 127.0.0.1.
//
//   node provider.mjs '{"port":0,"resource":"http://127.0.0.1:5555/mcp","format":"jwt",
//                       "alg":"ES256","access_ttl_s":3600,
//                       "introspection_client":{"id":"rypsok","secret":"..."}}'
//
// Options (all optional): port (0: a free one), resource (the one resource it issues
// tokens for, and the default), format ("jwt" | "opaque"), alg ("ES256" | "RS256": the
// access tokens' signature; both keys are in the JWKS), access_ttl_s, scopes (what the
// resource accepts; default the three rypsok scopes), grant_scopes (what the automated
// consent grants, default all requested: a test that wants a narrower token sets it),
// introspection_client ({id, secret}: a confidential client that may introspect any token).
//
// stdout carries one line, "READY <issuer>", once it listens; everything else goes to
// stderr, so the Python side can read that line and nothing more. SIGTERM/SIGINT end it.
import * as crypto from 'node:crypto';
import * as http from 'node:http';

import Provider, { errors } from 'oidc-provider';

// oidc-provider prints its notices with console.info (stdout): keep stdout for READY alone.
console.log = console.info = (...args) => console.error(...args);

const opts = {
  port: 0,
  resource: 'http://127.0.0.1:5555/mcp',
  format: 'jwt',
  alg: 'ES256',
  access_ttl_s: 3600,
  scopes: ['rypsok:search', 'rypsok:fetch', 'rypsok:status'],
  grant_scopes: null,
  introspection_client: null,
  ...(process.argv[2] ? JSON.parse(process.argv[2]) : {}),
};
if (!['jwt', 'opaque'].includes(opts.format)) throw new Error(`format: ${opts.format}`);
if (!['ES256', 'RS256'].includes(opts.alg)) throw new Error(`alg: ${opts.alg}`);

// Fresh keys on every start: nothing secret lives in the repository, and a test that
// caches a JWKS across providers would see the kid change.
function signingKey(type, alg, options) {
  const { privateKey } = crypto.generateKeyPairSync(type, options);
  return { ...privateKey.export({ format: 'jwk' }), kid: `${alg}-${crypto.randomUUID()}`, alg, use: 'sig' };
}
const jwks = {
  keys: [
    signingKey('ec', 'ES256', { namedCurve: 'P-256' }),
    signingKey('rsa', 'RS256', { modulusLength: 2048 }),
  ],
};

// Bind first, so that the issuer can name the port actually chosen.
const server = http.createServer();
await new Promise((resolve) => server.listen(opts.port, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const introspector = opts.introspection_client;
const clients = introspector ? [{
  client_id: introspector.id,
  client_secret: introspector.secret,
  token_endpoint_auth_method: 'client_secret_basic',
  // A resource server's client: it only introspects (and may revoke), never gets tokens.
  grant_types: [],
  response_types: [],
  redirect_uris: [],
}] : [];

const provider = new Provider(issuer, {
  jwks,
  clients,
  // DCR validates a client's `scope` against this list, so the resource's scopes are here too.
  scopes: ['openid', 'offline_access', ...opts.scopes],
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  // The SDK runs in node, not a browser, but CORS on everything costs nothing.
  clientBasedCORS: () => true,
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  // Refresh tokens for any client registered with the grant, without OIDC's offline_access
  // (the SDK asks for the resource's scopes only), and not tied to the login session.
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  expiresWithSession: async () => false,
  ttl: { AccessToken: opts.access_ttl_s },
  features: {
    devInteractions: { enabled: false }, // replaced by the automated route below
    registration: { enabled: true, initialAccessToken: false },
    revocation: { enabled: true },
    introspection: {
      enabled: true,
      // The default lets a confidential client introspect anything already; saying so
      // here silences its "should change" warning and keeps public clients to their own.
      allowedPolicy: async (ctx, client, token) => (
        (introspector && client.clientId === introspector.id) || token.clientId === client.clientId
      ),
    },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => opts.resource,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, indicator) => {
        if (indicator !== opts.resource) throw new errors.InvalidTarget();
        return {
          audience: opts.resource,
          scope: opts.scopes.join(' '),
          accessTokenTTL: opts.access_ttl_s,
          accessTokenFormat: opts.format,
          ...(opts.format === 'jwt' ? { jwt: { sign: { alg: opts.alg } } } : {}),
        };
      },
    },
  },
});

// Errors a test may want to read (a rejected resource, a bad PKCE verifier) go to stderr.
for (const event of ['authorization.error', 'grant.error', 'registration_create.error',
  'introspection.error', 'revocation.error', 'server_error']) {
  provider.on(event, (_ctx, err) => console.error(`oidc-provider ${event}: ${err?.message} ${err?.error_description ?? ''}`));
}

// Automated login and consent: whoever follows the redirect is "alice" and gets what the
// client asked for (cut to grant_scopes when set), so no human and no form is involved.
async function finishInteraction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, uid } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: 'alice' } };
  } else if (prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
    const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
    if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
    if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) {
      // A refused scope is rejected, not left out: left out, it would count as still
      // missing and send the user agent back to this same interaction.
      const refused = opts.grant_scopes ? scopes.filter((s) => !opts.grant_scopes.includes(s)) : [];
      grant.addResourceScope(indicator, scopes.filter((s) => !refused.includes(s)).join(' '));
      if (refused.length) grant.rejectResourceScope(indicator, refused.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  } else {
    throw new Error(`interaction ${uid}: unexpected prompt ${prompt.name}`);
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.method === 'GET' && req.url.startsWith('/interaction/')) {
    finishInteraction(req, res).catch((err) => {
      console.error(`interaction failed: ${err.stack ?? err}`);
      res.statusCode = 500;
      res.end(String(err.message ?? err));
    });
    return;
  }
  callback(req, res);
});

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// Keep-alive sockets would hold close() open: the SDK's fetch keeps them.
process.on('SIGTERM', () => server.closeAllConnections());
process.on('SIGINT', () => server.closeAllConnections());

process.stdout.write(`READY ${issuer}\n`);
