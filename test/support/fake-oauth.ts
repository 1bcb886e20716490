import { createHash, randomBytes } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { systemClock, type Clock } from '../../src/tool/clock.ts';

/** What the fake authorization server does; tests change it between requests. */
export interface FakeOAuthConfig {
  /** `expires_in` of issued access tokens, in seconds. */
  accessTokenTtl: number;
  /** `code_challenge_methods_supported` in the metadata; null leaves the field out. */
  codeChallengeMethods: string[] | null;
  /** Answer every refresh with `invalid_grant`. */
  refuseRefresh: boolean;
  /** Answer every token request with 503 `server_error` (a server that is down for a while). */
  tokenEndpointDown: boolean;
  /** Hold every token answer this long (a slow authorization server; races become certain). */
  tokenDelayMs: number;
  /** The `resource` of the protected resource metadata; the MCP URL when undefined. */
  prmResource?: string;
  /**
   * Serve protected resource metadata. Without it (a 2025-03-26 server) the MCP server's origin
   * serves the authorization server metadata itself, as the authorization server's issuer.
   */
  protectedResourceMetadata: boolean;
  /** A careless server: every error description repeats the secrets of the request. */
  leakyErrors: boolean;
  /** Where token lifetimes are measured; a test shares one manual clock with the client. */
  clock: Clock;
}

/** One request to `/token`, as received. */
export interface TokenRequest {
  readonly params: URLSearchParams;
  /** `issued`, or the OAuth error it was answered with. */
  outcome: string;
}

/**
 * A fake OAuth 2.1 authorization server and the MCP server it protects, each on its own loopback
 * port (plain node:http). The authorization endpoint approves at once (no human) and redirects
 * with `code` and `state`; the token endpoint checks PKCE S256, the `resource`, the redirect URI
 * and code reuse, and rotates refresh tokens.
 */
export interface FakeOAuth {
  /** The protected MCP endpoint. */
  readonly mcpUrl: string;
  /** The authorization server's issuer. */
  readonly issuer: string;
  readonly config: FakeOAuthConfig;
  /** The query of every authorization request. */
  readonly authorizeRequests: URLSearchParams[];
  readonly tokenRequests: TokenRequest[];
  /** Every dynamic client registration body. */
  readonly registrations: Record<string, unknown>[];
  /** The bearer token (or none) of every request to the MCP endpoint, and how it was answered. */
  readonly mcpRequests: { token: string | undefined; status: number }[];
  /** Every secret value the server handed out: codes, tokens, client secrets. */
  readonly issuedSecrets: Set<string>;
  /** Expire every access token issued so far (the client is not told). */
  expireAccessTokens(): void;
  close(): Promise<void>;
}

interface Grant {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly challenge: string;
  readonly resource: string | undefined;
  readonly scope: string | undefined;
  used: boolean;
}

interface Client {
  readonly secret: string;
  readonly redirectUris: readonly string[];
}

function secret(): string {
  return randomBytes(24).toString('base64url');
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function listen(server: HttpServer): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: HttpServer): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export async function startFakeOAuth(initial: Partial<FakeOAuthConfig> = {}): Promise<FakeOAuth> {
  const config: FakeOAuthConfig = {
    accessTokenTtl: 3600,
    clock: systemClock,
    codeChallengeMethods: ['S256'],
    refuseRefresh: false,
    protectedResourceMetadata: true,
    tokenEndpointDown: false,
    tokenDelayMs: 0,
    leakyErrors: false,
    ...initial,
  };
  const authorizeRequests: URLSearchParams[] = [];
  const tokenRequests: TokenRequest[] = [];
  const registrations: Record<string, unknown>[] = [];
  const mcpRequests: FakeOAuth['mcpRequests'] = [];
  const issuedSecrets = new Set<string>();
  const clients = new Map<string, Client>();
  const grants = new Map<string, Grant>();
  /** Live access tokens and their expiry (epoch ms). */
  const accessTokens = new Map<string, number>();
  const refreshTokens = new Map<string, { clientId: string; scope: string | undefined }>();

  const asServer = createServer();
  const rsServer = createServer();
  const issuer = await listen(asServer);
  const rsOrigin = await listen(rsServer);
  const mcpUrl = `${rsOrigin}/mcp`;
  const prmUrl = `${rsOrigin}/.well-known/oauth-protected-resource/mcp`;

  function issueTokens(clientId: string, scope: string | undefined) {
    const access = secret();
    const refresh = secret();
    issuedSecrets.add(access).add(refresh);
    accessTokens.set(access, config.clock.now().getTime() + config.accessTokenTtl * 1000);
    refreshTokens.set(refresh, { clientId, scope });
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: config.accessTokenTtl,
      refresh_token: refresh,
      ...(scope ? { scope } : {}),
    };
  }

  /** The client a token request authenticates as (none, post or basic), or undefined. */
  function authenticate(req: IncomingMessage, params: URLSearchParams): string | undefined {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [id, given] = basic
      ? Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent)
      : [params.get('client_id') ?? undefined, params.get('client_secret') ?? undefined];
    const client = id === undefined ? undefined : clients.get(id);
    if (!client) return undefined;
    if (client.secret !== '' && given !== client.secret) return undefined;
    return id;
  }

  async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const params = new URLSearchParams(await readBody(req));
    const record: TokenRequest = { params, outcome: 'issued' };
    tokenRequests.push(record);
    if (config.tokenDelayMs > 0) await new Promise((r) => setTimeout(r, config.tokenDelayMs));
    const refuse = (error: string, status = 400): void => {
      record.outcome = error;
      const echoed = ['code', 'code_verifier', 'refresh_token', 'client_secret']
        .map((name) => `${name}=${params.get(name) ?? ''}`)
        .concat(`authorization=${req.headers.authorization ?? ''}`);
      const description = config.leakyErrors ? `refused ${echoed.join(' ')}` : `refused: ${error}`;
      json(res, status, { error, error_description: description });
    };
    if (config.tokenEndpointDown) return refuse('server_error', 503);
    const clientId = authenticate(req, params);
    if (clientId === undefined) return refuse('invalid_client', 401);
    if (params.get('resource') !== mcpUrl) return refuse('invalid_target');
    if (params.get('grant_type') === 'authorization_code') {
      const grant = grants.get(params.get('code') ?? '');
      if (!grant || grant.clientId !== clientId) return refuse('invalid_grant');
      if (grant.used) return refuse('invalid_grant');
      grant.used = true;
      const verifier = params.get('code_verifier') ?? '';
      const computed = createHash('sha256').update(verifier).digest('base64url');
      if (verifier === '' || computed !== grant.challenge) return refuse('invalid_grant');
      if (params.get('redirect_uri') !== grant.redirectUri) return refuse('invalid_grant');
      if (grant.resource !== undefined && grant.resource !== params.get('resource'))
        return refuse('invalid_target');
      return json(res, 200, issueTokens(clientId, grant.scope));
    }
    if (params.get('grant_type') === 'refresh_token') {
      const presented = params.get('refresh_token') ?? '';
      const known = refreshTokens.get(presented);
      if (!known || known.clientId !== clientId || config.refuseRefresh)
        return refuse('invalid_grant');
      refreshTokens.delete(presented);
      return json(res, 200, issueTokens(clientId, known.scope));
    }
    return refuse('unsupported_grant_type');
  }

  function authorize(url: URL, res: ServerResponse): void {
    const query = url.searchParams;
    authorizeRequests.push(query);
    const client = clients.get(query.get('client_id') ?? '');
    const redirectUri = query.get('redirect_uri') ?? '';
    const challenge = query.get('code_challenge');
    if (
      !client ||
      !client.redirectUris.includes(redirectUri) ||
      query.get('response_type') !== 'code' ||
      query.get('code_challenge_method') !== 'S256' ||
      !challenge
    ) {
      res.writeHead(400);
      res.end('bad authorization request');
      return;
    }
    const code = secret();
    issuedSecrets.add(code);
    grants.set(code, {
      clientId: query.get('client_id') ?? '',
      redirectUri,
      challenge,
      resource: query.get('resource') ?? undefined,
      scope: query.get('scope') ?? undefined,
      used: false,
    });
    const target = new URL(redirectUri);
    target.searchParams.set('code', code);
    const state = query.get('state');
    if (state !== null) target.searchParams.set('state', state);
    res.writeHead(302, { location: target.href });
    res.end();
  }

  async function register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    registrations.push(body);
    const clientId = `client-${randomBytes(6).toString('hex')}`;
    const clientSecret = secret();
    issuedSecrets.add(clientSecret);
    const redirectUris = Array.isArray(body['redirect_uris'])
      ? body['redirect_uris'].filter((u): u is string => typeof u === 'string')
      : [];
    clients.set(clientId, { secret: clientSecret, redirectUris });
    json(res, 201, {
      ...body,
      client_id: clientId,
      client_secret: clientSecret,
      client_id_issued_at: Math.floor(config.clock.now().getTime() / 1000),
      token_endpoint_auth_method: 'client_secret_basic',
    });
  }

  function metadata(issuedBy = issuer) {
    return {
      issuer: issuedBy,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      registration_endpoint: `${issuer}/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      ...(config.codeChallengeMethods === null
        ? {}
        : { code_challenge_methods_supported: config.codeChallengeMethods }),
    };
  }

  async function routeAs(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', issuer);
    switch (`${req.method} ${url.pathname}`) {
      case 'GET /.well-known/oauth-authorization-server':
        return json(res, 200, metadata());
      case 'GET /authorize':
        return authorize(url, res);
      case 'POST /register':
        return register(req, res);
      case 'POST /token':
        return token(req, res);
      default:
        return json(res, 404, { error: 'not_found' });
    }
  }

  asServer.on('request', (req, res) => {
    routeAs(req, res).catch(() => {
      if (!res.headersSent) json(res, 500, { error: 'server_error' });
    });
  });

  const mcp = createMcpHandler(() => {
    const server = new Server(
      { name: 'fake-protected-mcp', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler('tools/list', () => ({
      tools: [
        {
          name: 'whoami',
          description: 'Says who is calling',
          inputSchema: { type: 'object', properties: {} },
        },
      ],
    }));
    server.setRequestHandler('tools/call', () => ({
      content: [{ type: 'text', text: 'an authorized caller' }],
    }));
    return server;
  });

  rsServer.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', rsOrigin);
    if (
      config.protectedResourceMetadata &&
      req.method === 'GET' &&
      url.pathname === '/.well-known/oauth-protected-resource/mcp'
    ) {
      json(res, 200, { resource: config.prmResource ?? mcpUrl, authorization_servers: [issuer] });
      return;
    }
    if (
      !config.protectedResourceMetadata &&
      req.method === 'GET' &&
      url.pathname === '/.well-known/oauth-authorization-server'
    ) {
      json(res, 200, metadata(rsOrigin));
      return;
    }
    if (url.pathname !== '/mcp') {
      json(res, 404, { error: 'not_found' });
      return;
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const expiry = token === undefined ? undefined : accessTokens.get(token);
    if (expiry === undefined || expiry <= config.clock.now().getTime()) {
      mcpRequests.push({ token, status: 401 });
      const params = [
        ...(config.protectedResourceMetadata ? [`resource_metadata="${prmUrl}"`] : []),
        ...(token === undefined ? [] : ['error="invalid_token"']),
      ];
      res.writeHead(401, { 'www-authenticate': `Bearer ${params.join(', ') || 'realm="mcp"'}` });
      res.end();
      return;
    }
    mcpRequests.push({ token, status: 200 });
    void readBody(req)
      .then(async (body) => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers))
          if (typeof v === 'string') headers.set(k, v);
        const response = await mcp.fetch(
          new Request(url, {
            method: req.method ?? 'GET',
            headers,
            ...(req.method === 'POST' ? { body } : {}),
          }),
        );
        res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
        if (!response.body) res.end();
        else Readable.fromWeb(response.body as never).pipe(res);
      })
      .catch(() => {
        if (!res.headersSent) json(res, 500, { error: 'server_error' });
      });
  });

  return {
    mcpUrl,
    issuer,
    config,
    authorizeRequests,
    tokenRequests,
    registrations,
    mcpRequests,
    issuedSecrets,
    expireAccessTokens() {
      for (const token of accessTokens.keys()) accessTokens.set(token, 0);
    },
    close: async () => {
      await Promise.all([close(asServer), close(rsServer)]);
    },
  };
}
