export { startTestIssuer, forgedTokens, type TestIssuer } from './test-issuer';
export { TEST_REDIS_URL, uniquePrefix, connectedRedis } from './redis';
export { answeredIdempotencyRecord, expectReplayOf } from './idempotency-retry';
export {
  describeTokenVerification,
  expectInvalidToken,
  type VerifyingService,
  type TokenVerificationSuiteOptions,
} from './token-verification.suite';
export {
  describeServiceOperations,
  type OperatedService,
  type ServiceOperationsSuiteOptions,
} from './service-operations.suite';
export { lintOpenApi } from './openapi-lint';
export { testSchemaMatchesMigrations } from './schema-drift.suite';
export {
  startServiceUnderTest,
  type ServiceUnderTest,
  type ServiceTestDeps,
  type StartServiceOptions,
  type VerifierTestSettings,
} from './service-under-test';
export { operationsLackingExamples, testEveryOperationHasExamples } from './openapi-examples.suite';
export { describeTenantWall, type TenantWallOptions, type TenantWallSetup } from './tenant-wall.suite';
export {
  checkConformanceAfterEachTest,
  createConformanceChecker,
  expectConformingResponses,
  recordConformance,
  type Checker,
  type CheckedResponse,
  type ConformanceRecorder,
} from './openapi-conformance';
export { describeFuzz, type FuzzOptions, type FuzzSetup } from './fuzz.suite';
export { discoverIds, exampleBody, fetchOpenApi, type KnownIds, type OpenApiDocument } from './openapi-walk';
export { freePort } from './free-port';
export { describeConditionalRequests, type ConditionalRequestsSetup } from './conditional-requests.suite';
export { startWebhookReceiver, type Received } from './webhook-receiver';
export {
  busyBackends,
  expectCutShortWhenIdle,
  readUntilClosed,
  stalledReader,
  waitUntil,
  type StalledReader,
} from './stalled-reader';
export {
  describeWebhooks,
  EVENT_OPERATIONS,
  type DispatcherFactory,
  type WebhooksSetup,
  type WebhookTrigger,
} from './webhooks.suite';
export { seedWebhook } from './seed-webhook';
export { testOutbound } from './test-outbound';
export { testWebhookSecrets } from './test-webhook-secrets';
export { storedEvents, whileEventsCannotBeStored, type RawSql, type StoredEvent } from './event-stream';
export { describeImportRules, importViolations } from './imports.suite';
export { configProblems } from './config-problems';
export { freshModule } from './fresh-module';
export { createStandInReplica, READ_REPLICA_ROLE, type StandInReplica } from './read-replica';
