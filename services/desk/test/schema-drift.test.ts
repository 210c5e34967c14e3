import path from 'node:path';
import { testSchemaMatchesMigrations } from '@msp/testkit';

testSchemaMatchesMigrations(path.join(__dirname, '..', 'prisma'));
