export type ServiceName = 'desk' | 'link' | 'hr';

export interface ServiceDefinition {
  readonly name: ServiceName;
  readonly defaultPort: number;
  /** Name of the service's own database on a shared server. */
  readonly database: string;
  /** Prefix of the variables that override this service alone (`DESK_PORT`, `DESK_DATABASE_URL`). */
  readonly envPrefix: string;
}

// Order matters: desk issues the tokens the other two verify, so it is listed
// (and its logs and URL appear) first.
export const SERVICES: readonly ServiceDefinition[] = [
  { name: 'desk', defaultPort: 3001, database: 'desk', envPrefix: 'DESK' },
  { name: 'link', defaultPort: 3002, database: 'link', envPrefix: 'LINK' },
  { name: 'hr', defaultPort: 3003, database: 'hr', envPrefix: 'HR' },
];

export function serviceByName(name: ServiceName): ServiceDefinition {
  const service = SERVICES.find((candidate) => candidate.name === name);
  if (!service) throw new Error(`unknown service ${name}`);
  return service;
}
