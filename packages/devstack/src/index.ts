// The launcher's parts, for its tests and for scripts that want the same
// embedded database (the command itself is cli.ts).
export { createDevstack, type Devstack, type DevstackIo, type ReadyDevstack } from './devstack';
export { readDevstackConfig, LAUNCHER_VARIABLES, type DevstackConfig } from './devstack-config';
export { DevstackError, isDevstackError } from './devstack-error';
export { startEmbeddedPostgres, embeddedServerUrl, type RunningEmbeddedPostgres } from './embedded-postgres';
export { ensureDatabases } from './ensure-databases';
export { databaseUrlFor, needsEmbeddedPostgres, resolveDatabaseUrls, redactPassword } from './database-urls';
export { buildServiceEnv, authSettingsFor } from './service-env';
export { findFreePort } from './port-check';
export { findRepoRoot } from './repo-root';
export { SERVICES, type ServiceName } from './services';
export { tenantCreate, type ToolIo } from './tenant-create';
export { recordedEmbeddedPostgresPort, embeddedPostgresStateFileOf } from './embedded-postgres-state';
