import path from 'node:path';
import type { DevstackConfig } from './devstack-config';
import { SERVICES, type ServiceDefinition } from './services';
import { serviceClientEnv, type ServiceClientCredential } from './service-client';

type Env = Record<string, string | undefined>;

/** Where a client on this machine reaches a server bound to `host`. */
export function loopbackAddressFor(host: string): string {
  if (['', '0.0.0.0', '::', '127.0.0.1', 'localhost'].includes(host)) return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** The name shown to people: `localhost` for any local bind, matching the documented URLs. */
function displayHostFor(host: string): string {
  const address = loopbackAddressFor(host);
  return address === '127.0.0.1' || address === '[::1]' ? 'localhost' : address;
}

export function baseUrlOf(config: Pick<DevstackConfig, 'host' | 'ports'>, service: ServiceDefinition): string {
  return `http://${displayHostFor(config.host)}:${config.ports[service.name]}/api/v1`;
}

export function readyzUrlOf(config: Pick<DevstackConfig, 'host' | 'ports'>, service: ServiceDefinition): string {
  return `http://${loopbackAddressFor(config.host)}:${config.ports[service.name]}/readyz`;
}

export function devClientFileOf(config: Pick<DevstackConfig, 'dataRoot'>, baseEnv: Env): string {
  return baseEnv['DEV_CLIENT_FILE'] || path.join(config.dataRoot, 'dev-client.json');
}

/**
 * The origins of the three services' reference pages, where a browser runs their "try it": each
 * asks desk's token endpoint for a token, which desk allows only from the origins in its
 * CORS_ORIGINS. desk's own default lists the standard ports; with DESK_PORT, LINK_PORT or HR_PORT
 * moved, the launcher names the ports it actually uses.
 */
export function docsOriginsFor(config: Pick<DevstackConfig, 'host' | 'ports'>): string[] {
  const hosts = new Set(['localhost', '127.0.0.1', displayHostFor(config.host)]);
  return SERVICES.flatMap((service) => [...hosts].map((host) => `http://${host}:${config.ports[service.name]}`));
}

export interface AuthSettings {
  readonly issuer: string;
  readonly audience: string;
  readonly jwksUrl: string;
}

/**
 * The three services must agree on these. They follow DESK_PORT so a moved
 * desk still verifies; the JWKS is fetched from the loopback address because
 * `localhost` may resolve to ::1 first while the service listens on IPv4 only.
 */
export function authSettingsFor(config: Pick<DevstackConfig, 'host' | 'ports'>, baseEnv: Env): AuthSettings {
  const deskPort = config.ports.desk;
  return {
    issuer: baseEnv['AUTH_ISSUER'] || `http://localhost:${deskPort}/api/v1`,
    audience: baseEnv['AUTH_AUDIENCE'] || 'msp-api',
    jwksUrl:
      baseEnv['AUTH_JWKS_URL'] || `http://${loopbackAddressFor(config.host)}:${deskPort}/api/v1/.well-known/jwks.json`,
  };
}

/**
 * The environment of one service process: the launcher's own environment
 * (PATH, LOG_LEVEL, JWT_PRIVATE_KEY, BOOTSTRAP_*, ...) with the values the
 * launcher decides laid over it.
 */
export function buildServiceEnv(
  service: ServiceDefinition,
  config: Pick<DevstackConfig, 'host' | 'ports' | 'dataRoot'>,
  databaseUrl: string,
  baseEnv: Env,
  serviceClient?: ServiceClientCredential,
): Env {
  const auth = authSettingsFor(config, baseEnv);
  const env: Env = {
    ...baseEnv,
    PORT: String(config.ports[service.name]),
    HOST: config.host,
    DATABASE_URL: databaseUrl,
    DATA_DIR: path.join(config.dataRoot, service.name),
    AUTH_ISSUER: auth.issuer,
    AUTH_AUDIENCE: auth.audience,
    AUTH_JWKS_URL: auth.jwksUrl,
    // A developer's webhooks and directories run on this machine: loopback may be called (and
    // nothing else internal). The caller's own setting wins.
    OUTBOUND_ALLOW_LOOPBACK: baseEnv['OUTBOUND_ALLOW_LOOPBACK'] || 'true',
    // glibc's malloc as the images set it (Dockerfile): a fixed mmap threshold, so one scrypt's
    // 16 MiB buffer does not leave every thread's arena holding its freed memory. The caller's wins.
    MALLOC_MMAP_THRESHOLD_: baseEnv['MALLOC_MMAP_THRESHOLD_'] || '131072',
  };
  // An empty REDIS_URL must read as absent (in-memory rate limits), not as a bad URL.
  if (!env['REDIS_URL']) delete env['REDIS_URL'];
  if (service.name === 'desk') {
    env['DEV_CLIENT_FILE'] = devClientFileOf(config, baseEnv);
    // The caller's own list wins; an empty one reads as unset, as desk reads it.
    if (!baseEnv['CORS_ORIGINS']?.trim()) env['CORS_ORIGINS'] = docsOriginsFor(config).join(',');
  }
  if (serviceClient) {
    const deskApiUrl = `http://${loopbackAddressFor(config.host)}:${config.ports.desk}/api/v1`;
    Object.assign(env, serviceClientEnv(service.name, serviceClient, deskApiUrl, baseEnv));
  }
  return env;
}
