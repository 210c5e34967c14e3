import './types';

export * from './errors';
export * from './types';
export { requestContext, currentContext, recordActor, runAs, type Actor, type RequestContext } from './request-context';
export { createLogger, type Logger } from './logger';
export {
  errorHandler,
  isDatabaseOutage,
  notFoundHandler,
  toProblem,
  sendProblem,
  PROBLEM_CONTENT_TYPE,
  type ProblemDocument,
} from './problem';
export { named } from './schema-names';
export { compileValidator, toFieldErrors, UUID_PATTERN } from './validation';
export {
  createApiRouter,
  resourceLockKey,
  type ApiRouter,
  type ResourceLock,
  type RouteSpec,
  type RouteInput,
} from './api-router';
export { buildOpenApiDocument, type OpenApiInfo, type OutgoingWebhookDoc, type ResponseSpec } from './openapi';
export { docsContentSecurityPolicy } from './docs';
export * from './pagination';
export { createRateLimiter, callerKey, type RateLimitOptions } from './rate-limit';
export { ipKeyGenerator } from 'express-rate-limit';
export { createHttpMetrics } from './metrics';
export { createReadiness, type Readiness, type ReadinessCheck } from './health';
export { startServer, exitOnSignals, type RunningServer } from './server';
export { loadConfig, ConfigError, commonConfigProperties, exportIdleTimeoutConfigProperties } from './config';
export { createRedis, redisFromConfig, parseSentinels, hasReplicas, type RedisEndpoint } from './redis';
export { createLeases, type Lease, type Leases, type LeasesOptions } from './leases';
export { createServiceApp, API_BASE_PATH, type ServiceApp, type ServiceAppOptions } from './app';
export * from './schema-helpers';
export { businessRuleProblem, BusinessRuleProblem, unprocessableResponse } from './problem-schemas';
export { statusMachine, transitionProblem } from './status-machine';
export { etagOf } from './conditional';
export {
  endStreamedFiles,
  sendStreamedFile,
  STREAMED_FILE_IDLE_DOC,
  STREAMED_FILE_IDLE_TIMEOUT_MS,
  type StreamedFile,
  type StreamedFileOptions,
} from './streamed-file';
export { apiCors, parseOriginList, securityHeaders } from './hardening';
export { runService, type BootedService, type BaseServiceConfig } from './run-service';
export {
  memoryIdempotencyStore,
  redisIdempotencyStore,
  createRouteOf,
  type EffectOfClaim,
  type IdempotencyStore,
  type IdempotencyStoreOptions,
} from './idempotency';
