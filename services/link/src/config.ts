import { Type, type Static } from '@sinclair/typebox';
import { eventsRetentionConfigProperties } from '@msp/events';
import { commonConfigProperties, ConfigError, loadConfig } from '@msp/http';
import { allowlistProblems, createOutbound, parseAllowlist, type Outbound } from '@msp/outbound';
import { isIP } from 'node:net';
import { encryptionKeyProblems } from '@msp/secrets';

export const LinkConfigSchema = Type.Object({
  ...commonConfigProperties,
  ...eventsRetentionConfigProperties,
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3002, description: 'Port the HTTP server listens on.' }),
  DATA_DIR: Type.String({
    default: '.data',
    description:
      "Folder of local state: the keys a service generates outside production (desk's signing key, the " +
      'encryption keys).',
  }),
  // link's own credential at desk (a desk service client): onboarding and offboarding read desk
  // users and write tickets with it, never with the caller's token (runs outlive the request).
  DESK_API_URL: Type.String({
    default: 'http://localhost:3001/api/v1',
    pattern: '^https?://',
    description: "desk's API as link reaches it: the users and tickets of onboarding, offboarding and move runs.",
  }),
  DESK_CLIENT_ID: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        "link's own service client at desk (an entry of desk's SERVICE_CLIENTS), used by runs instead of the " +
        "caller's token. Without it the desk tasks of runs fail saying so.",
    }),
  ),
  DESK_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1, description: "That service client's secret." })),
  // Checked below rather than by a pattern, so a malformed key is never echoed in the message.
  CONNECTOR_ENCRYPTION_KEY: Type.Optional(
    Type.String({
      description:
        "32 random bytes, base64 (`openssl rand -base64 32`): the AES-256-GCM key of connectors' bearer tokens " +
        'at rest. Required in production; elsewhere generated once into `$DATA_DIR/connector-encryption.key`.',
    }),
  ),
  OUTBOUND_ALLOWED_NETWORKS: Type.Optional(
    Type.String({
      description:
        "Comma-separated CIDR ranges (`10.20.0.0/16, fd00:1::/64`) link's directory connectors (SCIM and LDAP) may " +
        "reach although private: the networks of customers' domain controllers behind a VPN. Every other private, " +
        'link-local and metadata address stays refused, checked where the socket connects. Webhooks do not get them.',
    }),
  ),
  SYNC_INTERVAL_MINUTES: Type.Number({
    exclusiveMinimum: 0,
    default: 60,
    description: 'Every enabled connector is synced this often (`trigger: schedule`); fractions allowed.',
  }),
  FULL_SYNC_INTERVAL_HOURS: Type.Number({
    exclusiveMinimum: 0,
    default: 24,
    description:
      'A connector whose directory filters gets delta syncs, and a full sync (the only kind that notices ' +
      'deletions) at least this often; fractions allowed.',
  }),
});

export type LinkConfig = Static<typeof LinkConfigSchema>;

export function loadLinkConfig(env: NodeJS.ProcessEnv = process.env): LinkConfig {
  const config = loadConfig(LinkConfigSchema, env);
  const problems = [
    ...encryptionKeyProblems('CONNECTOR_ENCRYPTION_KEY', config.CONNECTOR_ENCRYPTION_KEY, config.NODE_ENV),
    ...encryptionKeyProblems('WEBHOOK_ENCRYPTION_KEY', config.WEBHOOK_ENCRYPTION_KEY, config.NODE_ENV),
  ];
  problems.push(...allowlistProblems(config.OUTBOUND_ALLOWLIST));
  try {
    parseAllowedNetworks(config.OUTBOUND_ALLOWED_NETWORKS);
  } catch (error) {
    problems.push(`OUTBOUND_ALLOWED_NETWORKS ${(error as Error).message}`);
  }
  if (problems.length) throw new ConfigError(problems);
  return config;
}

/** OUTBOUND_ALLOWED_NETWORKS: CIDR ranges only (a host name there would be trusted whatever it resolves to). */
export function parseAllowedNetworks(value: string | undefined): string[] {
  const entries = parseAllowlist(value);
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    if (prefix === undefined || !isIP(address))
      throw new Error(`"${entry}" is not a CIDR range (such as 10.20.0.0/16)`);
  }
  return entries;
}

/**
 * The address policy of link's directory connections: the service's own (OUTBOUND_ALLOWLIST,
 * OUTBOUND_ALLOW_LOOPBACK) and the customers' networks of OUTBOUND_ALLOWED_NETWORKS.
 */
export function directoryOutboundFromConfig(
  config: Pick<
    LinkConfig,
    'OUTBOUND_ALLOW_LOOPBACK' | 'OUTBOUND_ALLOWLIST' | 'OUTBOUND_ALLOWED_NETWORKS' | 'OUTBOUND_TIMEOUT_MS'
  >,
  options: { lookup?: (hostname: string) => Promise<string[]> } = {},
): Outbound {
  return createOutbound({
    allowLoopback: config.OUTBOUND_ALLOW_LOOPBACK ?? false,
    allowlist: [
      ...parseAllowlist(config.OUTBOUND_ALLOWLIST),
      ...parseAllowedNetworks(config.OUTBOUND_ALLOWED_NETWORKS),
    ],
    timeoutMs: config.OUTBOUND_TIMEOUT_MS,
    ...options,
  });
}
