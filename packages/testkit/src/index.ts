export { startTestIssuer, forgedTokens, type TestIssuer } from './test-issuer';
export { TEST_REDIS_URL, uniquePrefix } from './redis';
