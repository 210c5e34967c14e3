import path from 'node:path';
import { DevstackError } from './devstack-error';
import { SERVICES, type ServiceName } from './services';

export type LogFormat = 'pretty' | 'json';

export interface DevstackConfig {
  readonly repoRoot: string;
  /** Holds the embedded PostgreSQL cluster, each service's DATA_DIR and the dev client file. */
  readonly dataRoot: string;
  /** Address the services bind to. */
  readonly host: string;
  readonly ports: Readonly<Record<ServiceName, number>>;
  /** A PostgreSQL server URL; when set, no embedded PostgreSQL is started. */
  readonly databaseServerUrl: string | undefined;
  readonly databaseUrlOverrides: Readonly<Partial<Record<ServiceName, string>>>;
  readonly embeddedPostgresPort: number;
  readonly readyTimeoutMs: number;
  readonly stopTimeoutMs: number;
  readonly logFormat: LogFormat;
  readonly color: boolean;
  /** Replaces `node services/<name>/dist/index.js`; `{service}` is substituted. */
  readonly serviceCommand: readonly string[] | undefined;
}

export const DEFAULT_EMBEDDED_PG_PORT = 54329;
export const DEFAULT_READY_TIMEOUT_MS = 60_000;
// Longer than the services' own SHUTDOWN_TIMEOUT_MS (10 s by default), so
// they get to finish draining before SIGKILL.
export const DEFAULT_STOP_TIMEOUT_MS = 15_000;
// Loopback by default: the development client holds every scope, and the
// embedded database uses a well-known password.
export const DEFAULT_HOST = '127.0.0.1';

/**
 * Every variable the launcher itself reads, with its default: `--help` prints them, and
 * docs/configuration.md is generated from them (scripts/config-docs.js).
 */
export const LAUNCHER_VARIABLES: ReadonlyArray<readonly [name: string, meaning: string]> = [
  [
    'DATABASE_URL',
    'PostgreSQL server to use instead of the embedded one (PostgreSQL 18 under <data>/postgres); ' +
      'databases desk, link, hr are created on it',
  ],
  [
    'DESK_DATABASE_URL, LINK_DATABASE_URL, HR_DATABASE_URL',
    'full database URL of one service (wins over DATABASE_URL; created if missing)',
  ],
  ['REDIS_URL', 'passed to the services (unset: rate limits and Idempotency-Keys in memory)'],
  ['EMBEDDED_PG_PORT', `port of the embedded PostgreSQL on 127.0.0.1 (default ${DEFAULT_EMBEDDED_PG_PORT})`],
  [
    'DEVSTACK_DATA_DIR',
    'local state: postgres/, desk/, link/, hr/, dev-client.json, service-client.json, embedded-postgres.json (default <repo>/.data)',
  ],
  ['DESK_PORT, LINK_PORT, HR_PORT', 'service ports (default 3001, 3002, 3003)'],
  ['HOST', `address the services bind to (default ${DEFAULT_HOST}: the development client holds every scope)`],
  [
    'OUTBOUND_ALLOW_LOOPBACK',
    'passed to the services (default true: webhooks and directories on this machine may be called)',
  ],
  ['DEVSTACK_READY_TIMEOUT_MS', `how long to wait for every /readyz (default ${DEFAULT_READY_TIMEOUT_MS})`],
  ['DEVSTACK_STOP_TIMEOUT_MS', `grace period after SIGTERM before SIGKILL (default ${DEFAULT_STOP_TIMEOUT_MS})`],
  ['DEVSTACK_LOG_FORMAT', 'pretty (default) or json (service lines untouched)'],
  ['NO_COLOR / FORCE_COLOR', 'turn colours off / on'],
  ['DEVSTACK_SERVICE_CMD', 'command run instead of node services/{service}/dist/index.js (for tests)'],
  ['DEVSTACK_BUILD_CMD', 'command pnpm start runs instead of its turbo build (for tests)'],
];

type Env = Readonly<Record<string, string | undefined>>;

/** Reads and validates the launcher's variables once; a bad value stops the start with its name. */
export function readDevstackConfig(env: Env, repoRoot: string, stdoutIsTTY = false): DevstackConfig {
  const dataRoot = path.resolve(repoRoot, valueOf(env, 'DEVSTACK_DATA_DIR') ?? '.data');
  const ports = Object.fromEntries(
    SERVICES.map((service) => [service.name, readPort(env, `${service.envPrefix}_PORT`, service.defaultPort)]),
  ) as Record<ServiceName, number>;
  assertDistinctPorts(ports);

  const databaseUrlOverrides: Partial<Record<ServiceName, string>> = {};
  for (const service of SERVICES) {
    const name = `${service.envPrefix}_DATABASE_URL`;
    const url = readPostgresUrl(env, name);
    if (url) databaseUrlOverrides[service.name] = url;
  }

  return {
    repoRoot,
    dataRoot,
    host: valueOf(env, 'HOST') ?? DEFAULT_HOST,
    ports,
    databaseServerUrl: readPostgresUrl(env, 'DATABASE_URL'),
    databaseUrlOverrides,
    embeddedPostgresPort: readPort(env, 'EMBEDDED_PG_PORT', DEFAULT_EMBEDDED_PG_PORT),
    readyTimeoutMs: readPositiveInt(env, 'DEVSTACK_READY_TIMEOUT_MS', DEFAULT_READY_TIMEOUT_MS),
    stopTimeoutMs: readPositiveInt(env, 'DEVSTACK_STOP_TIMEOUT_MS', DEFAULT_STOP_TIMEOUT_MS),
    logFormat: readLogFormat(env),
    color: wantsColor(env, stdoutIsTTY),
    serviceCommand: readServiceCommand(env),
  };
}

// Compose files and shells often leave a variable defined but empty: that means unset.
function valueOf(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function readPort(env: Env, name: string, fallback: number): number {
  const port = readPositiveInt(env, name, fallback);
  if (port > 65_535) throw new DevstackError(`${name}=${port} is not a TCP port (1-65535)`);
  return port;
}

function readPositiveInt(env: Env, name: string, fallback: number): number {
  const raw = valueOf(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    throw new DevstackError(`${name}=${raw} must be a positive whole number`);
  }
  return Number(raw);
}

function readPostgresUrl(env: Env, name: string): string | undefined {
  const raw = valueOf(env, name);
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DevstackError(`${name} is not a URL (expected postgres://user:password@host:port/database)`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new DevstackError(`${name} must start with postgres:// or postgresql://, not ${url.protocol}//`);
  }
  return raw;
}

function readLogFormat(env: Env): LogFormat {
  const raw = valueOf(env, 'DEVSTACK_LOG_FORMAT') ?? 'pretty';
  if (raw !== 'pretty' && raw !== 'json') {
    throw new DevstackError(`DEVSTACK_LOG_FORMAT=${raw} must be pretty or json`);
  }
  return raw;
}

function wantsColor(env: Env, stdoutIsTTY: boolean): boolean {
  // https://no-color.org: any non-empty NO_COLOR disables colour.
  if (valueOf(env, 'NO_COLOR')) return false;
  const force = valueOf(env, 'FORCE_COLOR');
  if (force !== undefined) return force !== '0' && force !== 'false';
  return stdoutIsTTY;
}

function readServiceCommand(env: Env): string[] | undefined {
  const raw = valueOf(env, 'DEVSTACK_SERVICE_CMD');
  return raw === undefined ? undefined : raw.split(/\s+/);
}

function assertDistinctPorts(ports: Record<ServiceName, number>): void {
  const seen = new Map<number, ServiceName>();
  for (const service of SERVICES) {
    const port = ports[service.name];
    const other = seen.get(port);
    if (other) {
      throw new DevstackError(
        `${other} and ${service.name} would both listen on port ${port}: set ${service.envPrefix}_PORT`,
      );
    }
    seen.set(port, service.name);
  }
}
