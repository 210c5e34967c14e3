import type { RequestHandler } from 'express';

/** The ports of the three services when nothing moves them (the README's table of services). */
export const DEFAULT_PORTS = { desk: 3001, link: 3002, hr: 3003 } as const;

/**
 * The three services' own origins: in development each service's API reference page (link's and
 * hr's on other ports) gets its "try it" token from desk. The ports are where the services listen:
 * desk's own PORT, and link's and hr's as `pnpm start` moves them (LINK_PORT, HR_PORT, which the
 * launcher passes on to every service), so moved ports keep the pages' "try it" working.
 */
export function developmentCorsOrigins(ports: { desk: number; link: number; hr: number } = DEFAULT_PORTS): string[] {
  return [...new Set([ports.desk, ports.link, ports.hr])].flatMap((port) => [
    `http://localhost:${port}`,
    `http://127.0.0.1:${port}`,
  ]);
}

/** CORS_ORIGINS: comma-separated origins; unset means the development defaults (the services' own, at `ports`), or none in production. */
export function parseCorsOrigins(
  raw: string | undefined,
  nodeEnv: string,
  problems: string[],
  ports: { desk: number; link: number; hr: number } = DEFAULT_PORTS,
): string[] {
  if (raw === undefined || raw.trim() === '') return nodeEnv === 'production' ? [] : developmentCorsOrigins(ports);
  const origins: string[] = [];
  for (const item of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    let url: URL | undefined;
    try {
      url = new URL(item);
    } catch {
      url = undefined;
    }
    // An origin is scheme, host and port only; a path or a wildcard would silently never match.
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== item.replace(/\/$/, '')) {
      problems.push(
        `CORS_ORIGINS: "${item}" is not an origin like https://docs.example.com (scheme, host and port, no path)`,
      );
      continue;
    }
    origins.push(url.origin);
  }
  return origins;
}

/**
 * CORS for the token endpoint only, so the docs pages of the other services (other origins) can run
 * the OAuth2 client-credentials flow from the browser. A request from an origin not listed gets no
 * CORS header, and its preflight falls through to the API's usual answer; the rest of the API sends
 * no CORS headers at all. No credentials mode: the client authenticates with its id and secret.
 */
export function tokenEndpointCors(origins: string[]): RequestHandler {
  const allowed = new Set(origins);
  return (req, res, next) => {
    const origin = req.get('origin');
    if (!origin || !allowed.has(origin)) return next();
    res.vary('Origin');
    res.set('Access-Control-Allow-Origin', origin);
    if (req.method !== 'OPTIONS') return next();
    res
      .set({
        'Access-Control-Allow-Methods': 'POST',
        'Access-Control-Allow-Headers': 'Authorization, Content-Type, X-Request-Id, X-Requested-With',
        'Access-Control-Max-Age': '600',
      })
      .status(204)
      .end();
  };
}
