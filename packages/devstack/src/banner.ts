import fs from 'node:fs';

export interface DevClient {
  readonly client_id: string;
  readonly client_secret: string;
  readonly tenant?: string;
}

export interface BannerInput {
  readonly services: ReadonlyArray<{ readonly name: string; readonly baseUrl: string }>;
  readonly tokenUrl: string;
  readonly devClientFile: string;
  /** Contents of the dev client file, when desk wrote one. */
  readonly devClient: DevClient | undefined;
  /** BOOTSTRAP_CLIENT_ID when set: desk then ensures that client and writes no file. */
  readonly bootstrapClientId: string | undefined;
  readonly database: readonly string[];
  readonly redis: string;
}

export function readDevClientFile(file: string): DevClient | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const candidate = parsed as Partial<DevClient> | null;
  if (typeof candidate?.client_id !== 'string' || typeof candidate.client_secret !== 'string') return undefined;
  return {
    client_id: candidate.client_id,
    client_secret: candidate.client_secret,
    ...(typeof candidate.tenant === 'string' ? { tenant: candidate.tenant } : {}),
  };
}

/** Single-quoted for POSIX shells, whatever the value holds. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export function tokenCurl(tokenUrl: string, client: { clientId: string; clientSecret: string }): string {
  const body = JSON.stringify({
    grant_type: 'client_credentials',
    client_id: client.clientId,
    client_secret: client.clientSecret,
  });
  return `curl -s -X POST ${tokenUrl} -H 'Content-Type: application/json' -d ${shellQuote(body)}`;
}

// With bootstrap variables the secret is the caller's own: the command
// refers to the variables instead of printing it.
function bootstrapCurl(tokenUrl: string): string {
  return (
    `curl -s -X POST ${tokenUrl} -d grant_type=client_credentials ` +
    '--data-urlencode "client_id=$BOOTSTRAP_CLIENT_ID" --data-urlencode "client_secret=$BOOTSTRAP_CLIENT_SECRET"'
  );
}

export function renderBanner(input: BannerInput): string {
  const width = Math.max(...input.services.map((service) => service.name.length));
  const lines = [
    '',
    'The stack is ready.',
    '',
    ...input.services.map(
      (service) => `  ${service.name.padEnd(width)}  ${service.baseUrl}   (docs: ${service.baseUrl}/docs)`,
    ),
    '',
    ...input.database.map((line, index) => `  ${index === 0 ? 'database' : ''.padEnd(8)}  ${line}`),
    `  redis     ${input.redis}`,
    '',
    ...credentialLines(input),
    '',
    'Ctrl-C stops everything; the next start reuses the data.',
    '',
  ];
  return lines.join('\n');
}

function credentialLines(input: BannerInput): string[] {
  if (input.bootstrapClientId) {
    return [
      `API client: ${input.bootstrapClientId} (from BOOTSTRAP_CLIENT_ID / BOOTSTRAP_CLIENT_SECRET)`,
      'Get a token:',
      `  ${bootstrapCurl(input.tokenUrl)}`,
    ];
  }
  if (!input.devClient) {
    return [
      `Development client: desk wrote no ${input.devClientFile}; its id and secret are in desk's log above (printed once).`,
      'Get a token:',
      `  ${tokenCurl(input.tokenUrl, { clientId: '<client_id>', clientSecret: '<client_secret>' })}`,
    ];
  }
  return [
    `Development client (saved in ${input.devClientFile}):`,
    `  client_id      ${input.devClient.client_id}`,
    `  client_secret  ${input.devClient.client_secret}`,
    ...(input.devClient.tenant ? [`  tenant         ${input.devClient.tenant}`] : []),
    'Get a token:',
    `  ${tokenCurl(input.tokenUrl, { clientId: input.devClient.client_id, clientSecret: input.devClient.client_secret })}`,
  ];
}
