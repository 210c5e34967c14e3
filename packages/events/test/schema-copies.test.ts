import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  AUDIT_TYPE_SQL,
  IDEMPOTENCY_CLAIM_SQL,
  LIST_COUNTS_STATIC_SQL,
  LISTS_RETENTION_SQL,
  MIGRATION_SQL,
} from './support';

// Each service owns its database, so each schema declares the package's tables and each migration
// history creates them; these copies must stay the package's.
const ROOT = path.resolve(__dirname, '../../..');
const MODELS = readFileSync(path.join(__dirname, '../prisma/events.prisma'), 'utf8');

describe.each(['desk', 'link', 'hr'])('%s', (service) => {
  test('its schema.prisma holds the events models as the package states them', () => {
    expect(readFileSync(path.join(ROOT, 'services', service, 'prisma/schema.prisma'), 'utf8')).toContain(MODELS);
  });

  test("its migrations create the tables with the package's SQL", () => {
    const migration = path.join(
      ROOT,
      'services',
      service,
      'prisma/migrations/20261123210000_events_webhooks/migration.sql',
    );
    expect(readFileSync(migration, 'utf8')).toBe(MIGRATION_SQL);
    // list_counts and the lists' counters: one migration, the same in every service.
    const lists = path.join(
      ROOT,
      'services',
      service,
      'prisma/migrations/20261125153000_events_lists_retention/migration.sql',
    );
    expect(readFileSync(lists, 'utf8')).toBe(LISTS_RETENTION_SQL);
    // The audit log's type filter.
    const types = path.join(
      ROOT,
      'services',
      service,
      'prisma/migrations/20261128090000_events_audit_type/migration.sql',
    );
    expect(readFileSync(types, 'utf8')).toBe(AUDIT_TYPE_SQL);
    // The Idempotency-Key claim of each event.
    const claims = path.join(
      ROOT,
      'services',
      service,
      'prisma/migrations/20261128235900_events_idempotency_claim/migration.sql',
    );
    expect(readFileSync(claims, 'utf8')).toBe(IDEMPOTENCY_CLAIM_SQL);
    // The audit log's and the deliveries' counters by static SQL.
    const counters = path.join(
      ROOT,
      'services',
      service,
      'prisma/migrations/20261129062000_events_list_counts_static/migration.sql',
    );
    expect(readFileSync(counters, 'utf8')).toBe(LIST_COUNTS_STATIC_SQL);
  });
});
