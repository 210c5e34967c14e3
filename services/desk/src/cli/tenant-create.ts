#!/usr/bin/env node
/**
 * The platform operator's command: `node dist/cli/tenant-create.js <slug>` (in desk's image) or
 * `pnpm tenant:create <slug>` (repository root). Creates a tenant and its first administrator
 * client (every scope) in desk's database (DATABASE_URL), applying desk's migrations first.
 *
 * stdout carries exactly one JSON line, {"tenant_id","client_id","client_secret"}, so scripts can
 * read it; every message goes to stderr. Exit codes: 0 created, 1 failed (slug taken, database
 * unreachable), 2 usage.
 */
import { applyMigrations } from '@msp/db';
import { AppError } from '@msp/http';
import { createApiClientsAdminRepository } from '../api-clients/api-clients.repository';
import { createApiClientsService } from '../api-clients/api-clients.service';
import { createDb, MIGRATIONS_DIR } from '../db';

export const TENANT_SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

const USAGE =
  'usage: tenant-create <slug>   (slug: 1-63 characters of a-z 0-9 -, starting with a letter or digit; needs DATABASE_URL)';

/** The password of a database URL never reaches a message. */
function redact(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

export async function tenantCreate(
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: { out: (s: string) => void; err: (s: string) => void },
): Promise<number> {
  const args = argv.filter((arg) => arg !== '--');
  if (args.length !== 1 || !TENANT_SLUG.test(args[0]!)) {
    io.err(
      `tenant-create: ${args.length === 1 ? `"${args[0]}" is not a valid slug` : 'exactly one slug is required'}\n${USAGE}\n`,
    );
    return 2;
  }
  const slug = args[0]!;
  const databaseUrl = env.DATABASE_URL?.trim();
  if (!databaseUrl) {
    io.err(
      `tenant-create: DATABASE_URL is not set (desk's database, e.g. postgres://user:password@host:5432/desk)\n${USAGE}\n`,
    );
    return 2;
  }
  try {
    const { applied } = await applyMigrations(databaseUrl, MIGRATIONS_DIR);
    if (applied.length) io.err(`tenant-create: applied desk migrations: ${applied.join(', ')}\n`);
  } catch (error) {
    io.err(`tenant-create: cannot prepare desk's database at ${redact(databaseUrl)}: ${(error as Error).message}\n`);
    return 1;
  }
  const database = createDb(databaseUrl);
  try {
    const { tenant_id, client } = await createApiClientsService(
      createApiClientsAdminRepository(database.db),
    ).createTenant(slug);
    io.out(`${JSON.stringify({ tenant_id, client_id: client.client_id, client_secret: client.client_secret })}\n`);
    io.err(
      `tenant-create: tenant "${slug}" created with an administrator client holding every scope; store the secret now, it is not shown again\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof AppError && error.status === 409) {
      io.err(`tenant-create: the slug "${slug}" is taken: a tenant with it already exists; nothing was changed\n`);
    } else {
      io.err(`tenant-create: failed against ${redact(databaseUrl)}: ${(error as Error).message}\n`);
    }
    return 1;
  } finally {
    await database.close();
  }
}

if (require.main === module) {
  void tenantCreate(process.argv.slice(2), process.env, {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
  }).then((code) => {
    process.exitCode = code;
  });
}
