import path from 'node:path';
import { checkSchemaDrift } from '@msp/db';

/** Fails when a service's schema.prisma and its migrations describe different databases. */
export function testSchemaMatchesMigrations(prismaDir: string) {
  test('When schema.prisma is compared with the migrations, then they describe the same database', async () => {
    const drift = await checkSchemaDrift({
      schemaPath: path.join(prismaDir, 'schema.prisma'),
      migrationsDir: path.join(prismaDir, 'migrations'),
    });
    if (drift.drifted) {
      throw new Error(
        'prisma/schema.prisma and prisma/migrations differ. Create the missing migration with ' +
          '`pnpm migrate:create --name <change>` (never edit an applied one). It would contain:\n' +
          drift.sql,
      );
    }
  });
}
