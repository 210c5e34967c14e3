/** The scopes of the platform: every route names the one a token needs. */
export const SCOPES = {
  'read:tickets': 'Read tickets, comments and clients in the helpdesk.',
  'write:tickets': 'Create and modify tickets, comments and clients.',
  'read:users': 'List and read users (technicians).',
  'read:hr': 'Read timesheets, leaves and employees.',
  'write:hr': 'Record and change timesheets, leaves and employees.',
  'read:payroll': 'Export payroll data.',
  'admin:tenant': 'Full administration of the tenant; satisfies every other scope.',
} as const;

export type Scope = keyof typeof SCOPES;
export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];
export const ADMIN_SCOPE: Scope = 'admin:tenant';

/** `admin:tenant` satisfies every scope within its tenant. */
export function hasScope(granted: readonly string[], needed: string): boolean {
  return granted.includes(needed) || granted.includes(ADMIN_SCOPE);
}

export function parseScope(value: string | undefined): string[] {
  return (value ?? '').split(' ').filter(Boolean);
}

/** Pseudo-scope for routes that need a valid token but no particular scope. */
export const AUTHENTICATED = 'authenticated';
