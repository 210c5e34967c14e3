import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * Security headers for a JSON API, by helmet. A JSON response needs no sources at all, so the
 * policy is `default-src 'none'` and nobody may frame it; the reference page (docs.ts) replaces
 * the policy with the one it needs. HSTS only counts when the API is reached over HTTPS (the
 * ingress), where it should.
 */
export function securityHeaders(): RequestHandler {
  return helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
  });
}

/**
 * API_CORS_ORIGINS: comma-separated origins (scheme, host and port) whose pages may call the API
 * from a browser. The pattern is checked by the configuration schema; this only splits it.
 * Unset means none: CORS is off unless an operator turns it on.
 */
export function parseOriginList(raw: string | undefined): string[] {
  if (!raw) return [];
  return raw
    .split(',')
    .map((item) => item.trim().replace(/\/$/, ''))
    .filter(Boolean);
}

/** Comma-separated http(s) origins without a path: a path or a wildcard would silently never match. */
export const ORIGIN_LIST_PATTERN = '^\\s*https?://[^/,\\s*]+/?(\\s*,\\s*https?://[^/,\\s*]+/?)*\\s*$';

const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Request-Id, Idempotency-Key, If-Match, If-None-Match';
// What a script may read of a response: paging, the created resource, the request id, the limit.
const EXPOSED_HEADERS =
  'Location, Link, ETag, X-Request-Id, Retry-After, Idempotent-Replayed, X-RateLimit-Limit, ' +
  'X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy';

/**
 * CORS for the whole API, for the listed origins only (no credentials mode: callers send a bearer
 * token). A preflight from a listed origin is answered here, before authentication and the rate
 * limit (a preflight carries no token); anything from an unlisted origin gets no CORS header and
 * goes on as usual, so the browser blocks it.
 */
export function apiCors(origins: string[]): RequestHandler {
  const allowed = new Set(origins);
  return (req, res, next) => {
    if (allowed.size === 0) return next();
    res.vary('Origin');
    const origin = req.get('origin');
    if (!origin || !allowed.has(origin)) return next();
    res.set('Access-Control-Allow-Origin', origin);
    if (req.method !== 'OPTIONS' || !req.get('access-control-request-method')) {
      res.set('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      return next();
    }
    res
      .set({
        'Access-Control-Allow-Methods': 'GET, POST, PUT, PATCH, DELETE',
        'Access-Control-Allow-Headers': ALLOWED_HEADERS,
        'Access-Control-Max-Age': '600',
      })
      .status(204)
      .end();
  };
}
