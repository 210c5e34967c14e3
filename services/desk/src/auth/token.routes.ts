import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, type ApiRouter } from '@msp/http';
import { oauthError } from './oauth-error';
import {
  OAuthProblem,
  RevokeRequestBody,
  TokenRateLimitProblem,
  TokenRequestBody,
  TokenResponseBody,
} from './token.schemas';
import type { ClientCredentials, TokenService } from './token.service';

const FORM_OR_JSON = ['application/x-www-form-urlencoded', 'application/json'];

/** The caller's address as the rate limiter keys it (an IPv6 address by its /56). */
const addressOf = (req: Request) => ipKeyGenerator(req.ip ?? 'unknown');

/** client_secret_basic or client_secret_post (RFC 6749 §2.3.1), never both at once. */
export function clientCredentialsOf(req: Request): ClientCredentials {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const header = req.get('authorization');
  if (header && /^Basic\s/i.test(header)) {
    const decoded = Buffer.from(header.replace(/^Basic\s+/i, ''), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw oauthError('invalid_client', 'The Basic credentials are malformed.', { basicAuth: true });
    let clientId: string;
    let clientSecret: string;
    try {
      clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
      clientSecret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    } catch {
      throw oauthError('invalid_client', 'The Basic credentials are not correctly URL-encoded.', { basicAuth: true });
    }
    if (body.client_secret !== undefined)
      throw oauthError(
        'invalid_request',
        'Use one client authentication method: HTTP Basic or client_secret in the body, not both.',
      );
    if (body.client_id !== undefined && body.client_id !== clientId)
      throw oauthError('invalid_request', 'client_id in the body differs from the Basic credentials.');
    return { clientId, clientSecret, viaBasic: true, address: addressOf(req) };
  }
  return {
    clientId: typeof body.client_id === 'string' ? body.client_id : undefined,
    clientSecret: typeof body.client_secret === 'string' ? body.client_secret : undefined,
    viaBasic: false,
    address: addressOf(req),
  };
}

const invalidRequest = (errors: { field: string; message: string }[]) =>
  oauthError('invalid_request', errors.map((e) => `${e.field} ${e.message}`).join('; '));

export function registerTokenRoutes(api: ApiRouter, deps: { tokens: TokenService; tokenLimiter: RequestHandler }) {
  const problem = (status: number, error: string, title: string, detail: string) => ({
    type: `urn:msp:problem:oauth-${error.replace(/_/g, '-')}`,
    title,
    status,
    detail,
    request_id: '0e45781e-5e6d-481c-a743-4ca9e0ce2fec',
    error,
    error_description: detail,
  });
  const errors = {
    400: {
      description: 'invalid_request, invalid_grant, unsupported_grant_type or invalid_scope.',
      schema: OAuthProblem,
      contentType: 'application/problem+json',
      example: problem(400, 'invalid_scope', 'Token request refused', 'The client may not request: admin:tenant.'),
    },
    401: {
      description: 'invalid_client: the client credentials are missing or wrong.',
      schema: OAuthProblem,
      contentType: 'application/problem+json',
      example: problem(401, 'invalid_client', 'Client authentication failed', 'The client credentials are not valid.'),
    },
    429: {
      description:
        'Too many attempts, for one of two reasons. Per address and client id: more than `TOKEN_RATE_LIMIT_PER_MINUTE` (default 30) requests a minute. ' +
        'Per client id, from every address together: more than `TOKEN_CLIENT_FAILURE_LIMIT` (default 20) failed authentications of that `client_id` within ' +
        '`TOKEN_CLIENT_FAILURE_WINDOW_SEC` (default 900 s; the window starts with the first ' +
        'attempt); until the window ends, that `client_id` is answered 429 ' +
        'without checking the secret, except from an address it authenticated from successfully in the last 30 days, which keeps getting tokens. ' +
        'Unknown and revoked client ids are counted alike. `Retry-After` says when to try again.',
      schema: TokenRateLimitProblem,
      contentType: 'application/problem+json',
      headers: {
        'Retry-After': { description: 'Seconds until the attempt may be made again.', schema: { type: 'integer' } },
      },
      example: {
        type: 'urn:msp:problem:rate-limited',
        title: 'Too Many Requests',
        status: 429,
        detail:
          'Too many failed authentications for this client_id (20 per 900 seconds). Retry after the time given ' +
          'in Retry-After; addresses this client authenticated from before are not affected.',
        request_id: '0e45781e-5e6d-481c-a743-4ca9e0ce2fec',
      },
    },
  };

  api.route({
    method: 'post',
    path: '/auth/token',
    operationId: 'issueToken',
    summary: 'Obtain an access token',
    description:
      "OAuth 2.0 token endpoint (RFC 6749). `client_credentials` issues an access token for the client's scopes (or the subset named in `scope`); " +
      '`refresh_token` exchanges a refresh token for a new pair and retires the old one; presenting a retired refresh token revokes its whole grant. ' +
      'Client authentication: `client_id`/`client_secret` in the body or HTTP Basic. Limited per address and ' +
      'client id, and failed authentications per client id across all addresses (429, see below). ' +
      '*Service clients* (configured on desk by `SERVICE_CLIENTS`, bound to no tenant) send `tenant_id` with ' +
      '`client_credentials` and get a token for that tenant, within the scopes granted to them. ' +
      'Their access tokens carry the claim `client_kind: "service"` (any other client\'s: ' +
      '`"tenant"`); only with such a token may a call name, in `X-On-Behalf-Of`, ' +
      "the client it acts for, which the audit log records as the service client's claim (from any other token the header is ignored).",
    tags: ['Authentication'],
    scope: null,
    consumes: FORM_OR_JSON,
    body: TokenRequestBody,
    onInvalidBody: invalidRequest,
    before: [deps.tokenLimiter],
    responses: {
      200: { description: 'The token pair. Sent with `Cache-Control: no-store`.', schema: TokenResponseBody },
      ...errors,
    },
    handler: async (req, res, { body }) => {
      const credentials = clientCredentialsOf(req);
      const result = await deps.tokens.issue(credentials, body);
      res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(result);
    },
  });

  api.route({
    method: 'post',
    path: '/auth/revoke',
    operationId: 'revokeToken',
    summary: 'Revoke a refresh token',
    description:
      'RFC 7009. Revokes the refresh token and every token of its grant. Answers 200 whether or not the token was known.',
    tags: ['Authentication'],
    scope: null,
    consumes: FORM_OR_JSON,
    body: RevokeRequestBody,
    onInvalidBody: invalidRequest,
    before: [deps.tokenLimiter],
    responses: { 200: { description: 'Revoked, or unknown.' }, ...errors },
    handler: async (req, res, { body }) => {
      await deps.tokens.revoke(clientCredentialsOf(req), body.token);
      res.set('Cache-Control', 'no-store').status(200).end();
    },
  });
}
