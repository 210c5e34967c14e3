import { AppError } from '@msp/http';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unauthorized_client';

/**
 * RFC 6749 §5.2 errors inside an RFC 9457 problem document: OAuth libraries
 * read `error`/`error_description`, everyone else reads `type`/`detail`.
 */
export function oauthError(
  error: OAuthErrorCode,
  description: string,
  options: { basicAuth?: boolean } = {},
): AppError {
  const status = error === 'invalid_client' ? 401 : 400;
  return new AppError(status, description, {
    code: `oauth-${error.replace(/_/g, '-')}`,
    title: error === 'invalid_client' ? 'Client authentication failed' : 'Token request refused',
    extensions: { error, error_description: description },
    headers: {
      'Cache-Control': 'no-store',
      ...(error === 'invalid_client' && options.basicAuth
        ? { 'WWW-Authenticate': 'Basic realm="msp", charset="UTF-8"' }
        : {}),
    },
  });
}
