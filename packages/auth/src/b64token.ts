/**
 * RFC 6750's b64token (§2.1), the characters a bearer token may have, as a pattern's source: the
 * verifier's check of a token and authenticate's pattern of the Authorization header are built from
 * it, so the two always agree on what a token is.
 */
export const B64TOKEN = '[A-Za-z0-9\\-._~+/]+=*';
