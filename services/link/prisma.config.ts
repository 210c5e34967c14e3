// Prisma 7 reads connection URLs from here, not from schema.prisma, and no longer loads .env.
// The default is the local development database, so `generate` (which never connects) and a
// developer's `migrate:create` work with no environment at all.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/msp_link_dev',
    // Unset: the schema engine stand-in creates and drops a temporary shadow database itself.
    shadowDatabaseUrl: process.env.SHADOW_DATABASE_URL,
  },
});
