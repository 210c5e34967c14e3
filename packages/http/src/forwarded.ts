import type { Request } from 'express';

type TrustFn = (address: string, hop: number) => boolean;

// One or more path segments of unreserved characters, none of them "." or "..".
const PREFIX = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9._~-]+)+$/;

/**
 * The path prefix a reverse proxy serves this app under, from its X-Forwarded-Prefix header (the
 * compose ingress routes http://localhost:8080/desk/api/v1/... to desk's /api/v1/... with
 * `X-Forwarded-Prefix: /desk`), for the absolute links the app writes. '' when there is none, when
 * the request did not come from a trusted proxy (`trust proxy`, as for X-Forwarded-Proto), or when
 * the value is not a plain path.
 */
export function forwardedPrefix(req: Request): string {
  const header = req.get('x-forwarded-prefix');
  if (!header) return '';
  const trust = req.app.get('trust proxy fn') as TrustFn | undefined;
  if (!trust?.(req.socket.remoteAddress ?? '', 0)) return '';
  const prefix = header.split(',')[0]!.trim().replace(/\/$/, '');
  return PREFIX.test(prefix) ? prefix : '';
}
