import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small OAuth 2.0 authorization server for XOAUTH2/OAUTHBEARER tests: a token endpoint for the
 * client credentials grant (what a service account for Microsoft 365 or Google uses to reach a
 * mailbox) and an RFC 7662 introspection endpoint, which Dovecot's `oauth2` passdb calls
 * (`introspection_mode = post`) to learn whether a bearer token is live and whose it is.
 */
export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  /** The mailbox (login name) tokens of this client are for. */
  username: string;
  /** Lifetime of issued tokens in seconds (default 3600). */
  expiresInSeconds?: number;
}

export interface TokenRequest {
  clientId: string;
  scope: string | undefined;
  at: Date;
  granted: boolean;
}

export interface OAuthServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** POST, `grant_type=client_credentials`, client authenticated by HTTP Basic or in the body. */
  tokenUrl: string;
  /** POST `token=<token>` → `{active, username, …}` (RFC 7662). */
  introspectionUrl: string;
  registerClient(client: OAuthClient): void;
  /** A live token for `username` without going through the token endpoint. */
  issueToken(username: string, options?: { expiresInSeconds?: number; scope?: string }): string;
  /** Makes a token (or every token, with no argument) inactive from now on. */
  revoke(token?: string): void;
  /** Whether `token` is live and, when `username` is given, belongs to it. */
  isValid(token: string, username?: string): boolean;
  /** Every call of the token endpoint, in order. */
  readonly tokenRequests: readonly TokenRequest[];
  /** How many times the introspection endpoint was called. */
  readonly introspections: number;
  stop(): Promise<void>;
}

interface Token {
  username: string;
  clientId: string | undefined;
  scope: string | undefined;
  expiresAt: number;
  revoked: boolean;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

export async function startOAuthServer(options: { clients?: readonly OAuthClient[] } = {}): Promise<OAuthServer> {
  const clients = new Map<string, OAuthClient>();
  for (const c of options.clients ?? []) clients.set(c.clientId, c);
  const tokens = new Map<string, Token>();
  const tokenRequests: TokenRequest[] = [];
  let introspections = 0;

  const mint = (
    username: string,
    clientId: string | undefined,
    scope: string | undefined,
    expiresInSeconds: number,
  ): string => {
    const token = randomBytes(24).toString('base64url');
    tokens.set(token, { username, clientId, scope, expiresAt: Date.now() + expiresInSeconds * 1000, revoked: false });
    return token;
  };
  const live = (token: string): Token | undefined => {
    const t = tokens.get(token);
    return t && !t.revoked && t.expiresAt > Date.now() ? t : undefined;
  };

  const server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST') return json(res, 405, { error: 'invalid_request' });
      const form = await readForm(req);
      if (req.url === '/token') {
        let clientId = form.get('client_id') ?? undefined;
        let clientSecret = form.get('client_secret') ?? undefined;
        const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
        if (basic) {
          const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
          const colon = decoded.indexOf(':');
          clientId = decodeURIComponent(decoded.slice(0, colon));
          clientSecret = decodeURIComponent(decoded.slice(colon + 1));
        }
        const scope = form.get('scope') ?? undefined;
        const client = clientId ? clients.get(clientId) : undefined;
        const granted =
          !!client && client.clientSecret === clientSecret && form.get('grant_type') === 'client_credentials';
        tokenRequests.push({ clientId: clientId ?? '', scope, at: new Date(), granted });
        if (!client || client.clientSecret !== clientSecret)
          return json(res, 401, { error: 'invalid_client' }, { 'www-authenticate': 'Basic' });
        if (form.get('grant_type') !== 'client_credentials') return json(res, 400, { error: 'unsupported_grant_type' });
        const expiresIn = client.expiresInSeconds ?? 3600;
        const accessToken = mint(client.username, client.clientId, scope, expiresIn);
        return json(res, 200, {
          access_token: accessToken,
          token_type: 'Bearer',
          expires_in: expiresIn,
          ...(scope ? { scope } : {}),
        });
      }
      if (req.url === '/introspect') {
        introspections++;
        const t = live(form.get('token') ?? '');
        if (!t) return json(res, 200, { active: false });
        return json(res, 200, {
          active: true,
          username: t.username,
          sub: t.username,
          email: t.username,
          client_id: t.clientId,
          scope: t.scope,
          token_type: 'Bearer',
          exp: Math.floor(t.expiresAt / 1000),
        });
      }
      return json(res, 404, { error: 'not_found' });
    })().catch(() => {
      if (!res.headersSent) json(res, 400, { error: 'invalid_request' });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    tokenUrl: `${url}/token`,
    introspectionUrl: `${url}/introspect`,
    registerClient: (c) => void clients.set(c.clientId, c),
    issueToken: (username, o = {}) => mint(username, undefined, o.scope, o.expiresInSeconds ?? 3600),
    revoke(token) {
      for (const [key, t] of tokens) if (token === undefined || key === token) t.revoked = true;
    },
    isValid(token, username) {
      const t = live(token);
      return !!t && (username === undefined || t.username === username);
    },
    tokenRequests,
    get introspections() {
      return introspections;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
