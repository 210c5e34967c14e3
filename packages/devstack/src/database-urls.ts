import type { DevstackConfig } from './devstack-config';
import { SERVICES, type ServiceName } from './services';

/** The same server and credentials (and query options such as sslmode), another database. */
export function databaseUrlFor(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

export function databaseNameOf(databaseUrl: string): string {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
  if (!name) throw new Error(`${redactPassword(databaseUrl)} names no database`);
  return name;
}

/** For logs and banners: the password never reaches a terminal or a CI log. */
export function redactPassword(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  if (url.password) url.password = '***';
  return url.toString();
}

export function needsEmbeddedPostgres(
  config: Pick<DevstackConfig, 'databaseServerUrl' | 'databaseUrlOverrides'>,
): boolean {
  if (config.databaseServerUrl) return false;
  return SERVICES.some((service) => !config.databaseUrlOverrides[service.name]);
}

/**
 * Each service's DATABASE_URL: its own override, else its database on the
 * configured server, else its database on the embedded one.
 */
export function resolveDatabaseUrls(
  config: Pick<DevstackConfig, 'databaseServerUrl' | 'databaseUrlOverrides'>,
  embeddedServerUrl: string | undefined,
): Record<ServiceName, string> {
  const serverUrl = config.databaseServerUrl ?? embeddedServerUrl;
  const entries = SERVICES.map((service) => {
    const override = config.databaseUrlOverrides[service.name];
    if (override) return [service.name, override] as const;
    if (!serverUrl) {
      throw new Error(
        `no database for ${service.name}: neither ${service.envPrefix}_DATABASE_URL, DATABASE_URL nor an embedded server`,
      );
    }
    return [service.name, databaseUrlFor(serverUrl, service.database)] as const;
  });
  return Object.fromEntries(entries) as Record<ServiceName, string>;
}
