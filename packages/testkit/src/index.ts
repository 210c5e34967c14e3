export { startTestIssuer, forgedTokens, type TestIssuer } from './test-issuer';
export { TEST_REDIS_URL, uniquePrefix } from './redis';
export { describeTokenVerification, expectInvalidToken, type VerifyingService, type TokenVerificationSuiteOptions } from './token-verification.suite';
export { describeServiceOperations, type OperatedService, type ServiceOperationsSuiteOptions } from './service-operations.suite';
export { lintOpenApi } from './openapi-lint';
export { testSchemaMatchesMigrations } from './schema-drift.suite';
export { startServiceUnderTest, type ServiceUnderTest, type ServiceTestDeps, type StartServiceOptions, type VerifierTestSettings } from './service-under-test';
export { operationsLackingExamples, testEveryOperationHasExamples } from './openapi-examples.suite';
export { describeTenantWall, type TenantWallOptions, type TenantWallSetup } from './tenant-wall.suite';
