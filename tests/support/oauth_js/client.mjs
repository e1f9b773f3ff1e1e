// A real MCP TypeScript SDK client doing the whole OAuth flow against an MCP server, for
// rypsok's tests. One JSON argument; one JSON report on stdout at the end.
//
//   node client.mjs '{"server_url":"http://127.0.0.1:5555/mcp",
//                     "steps":["connect","list","call:web_search:{\"query\":\"x\"}"],
//                     "scope":null,"timeout_ms":60000}'
//
// Steps:
//   connect               401 -> protected resource metadata -> AS metadata -> dynamic
//                         registration -> authorize (automated consent) -> token -> initialize
//   list                  tools/list
//   call:<tool>:<json>    tools/call (args optional; the JSON may contain ':')
//                         (list and call: when the SDK had to authorize anew, e.g. after a
//                         revoked grant, the step finishes that and retries once:
//                         "reauthorized": true)
//   sleep:<ms>
//   revoke[:refresh]      revoke the current access (or refresh) token at the IdP, as the
//                         public client (oidc-provider refuses JWT access tokens: 400)
//   probe[:<tool>[:<json>]]  one raw POST of a tools/call with the current access token and
//                         session, no SDK retry; reports status and WWW-Authenticate
//   spoil-access          replace the access token with junk, so the next request meets a
//                         401 invalid_token and the SDK refreshes. The SDK never reads
//                         expires_in (no proactive refresh), so this stands in for
//                         "expire-local"; a real short TTL takes the same path.
//   close                 DELETE the session and close the transport
// Option "scope": the scope the client asks for at the authorization endpoint. The SDK
// itself asks for the PRM's scopes_supported (or a 401/403's scope), so a narrower request
// is made by rewriting the authorization URL here.
//
// Report: {ok, steps: [{step, ok, ms, http: ["POST /mcp 401", ...], ...}], token_requests:
// {authorization_code: n, refresh_token: n}, registrations, authorizations, client_id,
// access_token, refresh_token, scope, protocol_version, session_id, total_ms}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

// The SDK may warn with console.log/info; stdout is for the report alone.
console.log = console.info = (...args) => console.error(...args);

const REDIRECT_URI = 'http://127.0.0.1:9/callback'; // never served: the code is read off the Location
const opts = { scope: null, timeout_ms: 60000, client_name: 'rypsok-tests', ...JSON.parse(process.argv[2] ?? '{}') };
if (!opts.server_url || !Array.isArray(opts.steps)) {
  console.error('usage: node client.mjs \'{"server_url": "...", "steps": [...]}\'');
  process.exit(2);
}
const serverUrl = new URL(opts.server_url);
const started = performance.now();

// Every request the SDK makes (MCP, discovery, registration, token) passes here, so the
// report can say what was seen, and count token requests by grant type.
const httpLog = [];
const tokenRequests = { authorization_code: 0, refresh_token: 0 };
let registrations = 0;
async function recordingFetch(input, init = {}) {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = init.method ?? (input instanceof Request ? input.method : 'GET');
  const grant = init.body instanceof URLSearchParams ? init.body.get('grant_type') : null;
  if (grant) tokenRequests[grant] = (tokenRequests[grant] ?? 0) + 1;
  const response = await fetch(input, init);
  if (method === 'POST' && url.pathname.endsWith('/reg') && response.status === 201) registrations += 1;
  const challenge = response.headers.get('www-authenticate');
  httpLog.push(`${method} ${url.origin === serverUrl.origin ? '' : url.origin}${url.pathname}`
    + `${grant ? ` (${grant})` : ''} ${response.status}${challenge ? ` [${challenge}]` : ''}`);
  return response;
}

// Follows the IdP's redirects as a browser would (a cookie jar, no human), from the
// authorization URL through the automated login and consent to the redirect URI.
async function automatedConsent(authorizationUrl) {
  const jar = new Map();
  let url = new URL(authorizationUrl);
  for (let hop = 0; hop < 20; hop += 1) {
    if (url.href.startsWith(REDIRECT_URI)) {
      const error = url.searchParams.get('error');
      if (error) throw new Error(`authorization refused: ${error}: ${url.searchParams.get('error_description')}`);
      return url.searchParams.get('code');
    }
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    httpLog.push(`GET ${url.origin}${url.pathname} ${response.status} (consent)`);
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1)];
      const gone = !value || attrs.some((a) => /^\s*expires=.*1970/i.test(a) || /^\s*max-age=0\b/i.test(a));
      if (gone) jar.delete(name); else jar.set(name, value);
    }
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) {
      throw new Error(`consent stopped at ${url.pathname}: ${response.status} ${(await response.text()).slice(0, 300)}`);
    }
    await response.body?.cancel();
    url = new URL(location, url);
  }
  throw new Error('consent: too many redirects');
}

// The SDK's OAuthClientProvider, in memory.
const auth = {
  code: null,
  authorizations: 0,
  discovery: undefined,
  client: undefined,
  _tokens: undefined,
  verifier: undefined,
  get redirectUrl() { return REDIRECT_URI; },
  get clientMetadata() {
    return {
      client_name: opts.client_name,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(opts.scope ? { scope: opts.scope } : {}),
    };
  },
  clientInformation() { return this.client; },
  saveClientInformation(info) { this.client = info; },
  tokens() { return this._tokens; },
  saveTokens(tokens) { this._tokens = tokens; },
  saveCodeVerifier(verifier) { this.verifier = verifier; },
  codeVerifier() { return this.verifier; },
  discoveryState() { return this.discovery; },
  saveDiscoveryState(state) { this.discovery = state; },
  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this._tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  },
  async redirectToAuthorization(authorizationUrl) {
    this.authorizations += 1;
    if (opts.scope) authorizationUrl.searchParams.set('scope', opts.scope);
    this.code = await automatedConsent(authorizationUrl);
  },
};

let client;
let transport;
let lastTools = [];

async function connect() {
  const attempt = async () => {
    transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: auth, fetch: recordingFetch });
    client = new Client({ name: opts.client_name, version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
  };
  try {
    await attempt();
    return { reauthorized: false };
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || !auth.code) throw error;
  }
  // The SDK's documented flow: finishAuth with the code, then connect on a new transport.
  const code = auth.code;
  auth.code = null;
  await transport.finishAuth(code);
  await attempt();
  return { reauthorized: true };
}

// After a refused refresh (say the grant was revoked) the SDK starts a new authorization and
// throws UnauthorizedError from the request; the app is to finish it and try again, as here.
async function withReauthorization(request) {
  try {
    return { ...(await request()), reauthorized: false };
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || !auth.code) throw error;
  }
  const code = auth.code;
  auth.code = null;
  await transport.finishAuth(code);
  return { ...(await request()), reauthorized: true };
}

function firstText(result) {
  return result.content?.find((c) => c.type === 'text')?.text ?? null;
}

async function revocationEndpoint() {
  const metadata = auth.discovery?.authorizationServerMetadata;
  if (!metadata?.revocation_endpoint) throw new Error('no revocation_endpoint known (connect first)');
  return metadata.revocation_endpoint;
}

async function runStep(step) {
  const [name, ...rest] = step.split(':');
  const arg = rest.join(':');
  switch (name) {
    case 'connect': {
      const { reauthorized } = await connect();
      return { reauthorized, protocol_version: transport.protocolVersion ?? null, session_id: transport.sessionId ?? null };
    }
    case 'list': {
      const { tools, reauthorized } = await withReauthorization(() => client.listTools());
      lastTools = tools.map((t) => t.name);
      return { tools: lastTools, reauthorized };
    }
    case 'call': {
      const [tool, ...json] = rest;
      const args = json.length ? JSON.parse(json.join(':')) : {};
      const result = await withReauthorization(() => client.callTool({ name: tool, arguments: args }));
      return { tool, is_error: result.isError ?? false, text: firstText(result), reauthorized: result.reauthorized };
    }
    case 'sleep':
      await new Promise((resolve) => setTimeout(resolve, Number(arg)));
      return {};
    case 'revoke': {
      const which = arg === 'refresh' ? 'refresh_token' : 'access_token';
      const token = auth._tokens?.[which];
      if (!token) throw new Error(`no ${which} to revoke`);
      const body = new URLSearchParams({ token, token_type_hint: which, client_id: auth.client.client_id });
      const response = await recordingFetch(await revocationEndpoint(), { method: 'POST', body });
      return { status: response.status, body: (await response.text()).slice(0, 300) };
    }
    case 'probe': {
      const [tool = lastTools[0] ?? 'engine_status', ...json] = rest;
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      };
      if (auth._tokens) headers.authorization = `Bearer ${auth._tokens.access_token}`;
      if (transport?.sessionId) headers['mcp-session-id'] = transport.sessionId;
      if (transport?.protocolVersion) headers['mcp-protocol-version'] = transport.protocolVersion;
      const body = JSON.stringify({
        jsonrpc: '2.0', id: 'probe', method: 'tools/call',
        params: { name: tool, arguments: json.length ? JSON.parse(json.join(':')) : {} },
      });
      const response = await recordingFetch(serverUrl, { method: 'POST', headers, body });
      return {
        status: response.status,
        www_authenticate: response.headers.get('www-authenticate'),
        body: (await response.text()).slice(0, 300),
      };
    }
    case 'spoil-access':
      if (!auth._tokens) throw new Error('no tokens yet');
      auth._tokens = { ...auth._tokens, access_token: 'spoiled-access-token' };
      return {};
    case 'close':
      await transport.terminateSession().catch(() => {});
      await transport.close();
      return {};
    default:
      throw new Error(`unknown step ${step}`);
  }
}

const steps = [];
let mark = 0; // where the current step's part of httpLog starts
function report() {
  const tokens = auth._tokens ?? {};
  return {
    ok: steps.length === opts.steps.length && steps.every((s) => s.ok),
    steps,
    token_requests: tokenRequests,
    registrations,
    authorizations: auth.authorizations,
    client_id: auth.client?.client_id ?? null,
    access_token: tokens.access_token ?? null,
    refresh_token: tokens.refresh_token ?? null,
    scope: tokens.scope ?? null,
    protocol_version: transport?.protocolVersion ?? null,
    session_id: transport?.sessionId ?? null,
    total_ms: Math.round(performance.now() - started),
  };
}

// A stuck step still yields a report (with what was seen so far), not a silent hang.
const deadline = setTimeout(() => {
  steps.push({ step: opts.steps[steps.length], ok: false, error: `timeout after ${opts.timeout_ms} ms`, http: httpLog.slice(mark) });
  process.stdout.write(`${JSON.stringify(report())}\n`, () => process.exit(3));
}, opts.timeout_ms);

for (const step of opts.steps) {
  const t0 = performance.now();
  mark = httpLog.length;
  let entry;
  try {
    entry = { step, ok: true, ...(await runStep(step)) };
  } catch (error) {
    entry = { step, ok: false, error: `${error?.constructor?.name}: ${error?.message ?? error}` };
  }
  entry.ms = Math.round(performance.now() - t0);
  entry.http = httpLog.slice(mark);
  steps.push(entry);
}
clearTimeout(deadline);
await transport?.close().catch(() => {});
process.stdout.write(`${JSON.stringify(report())}\n`, () => process.exit(0));
