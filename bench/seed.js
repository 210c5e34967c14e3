'use strict';
// Seeds one tenant in a few statements (generate_series), not with HTTP calls: clients, users and
// tickets spread over every status, priority, category, client and assignee, newest created last.
const { Client } = require('pg');

const CLIENTS = 50;
const USERS = 20;

async function seedTenant(databaseUrl, tenantId, tickets) {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query('BEGIN');
    await db.query(
      `INSERT INTO clients (tenant_id, name, email) SELECT $1, 'Client ' || g, 'it@client' || g || '.example' FROM generate_series(1, ${CLIENTS}) g`,
      [tenantId],
    );
    await db.query(
      `INSERT INTO users (tenant_id, name, email) SELECT $1, 'Technician ' || g, 'tech' || g || '@bench.example' FROM generate_series(1, ${USERS}) g`,
      [tenantId],
    );
    await db.query(
      `WITH c AS (SELECT array_agg(id ORDER BY created_at, id) AS ids FROM clients WHERE tenant_id = $1),
            u AS (SELECT array_agg(id ORDER BY created_at, id) AS ids FROM users WHERE tenant_id = $1),
            -- Words for GET /tickets?q= (German and English, umlauts): each in about 1/16 of the titles.
            w AS (SELECT ARRAY['Drucker', 'printer', 'network', 'VPN', 'Outlook', 'Störung', 'Laptop', 'Monitor', 'Passwort', 'Firewall',
                               'Server', 'Backup', 'Mail', 'Scanner', 'Telefon', 'Lizenz'] AS words),
            t AS (
              SELECT g, (enum_range(NULL::ticket_status))[1 + (g / 3) % 5] AS status,
                     now() - make_interval(secs => $2 - g) AS at
                FROM generate_series(1, $2::int) g)
       INSERT INTO tickets (tenant_id, number, title, description, priority, category, status, client_id, assignee_id,
                            created_at, updated_at, resolved_at, closed_at)
       SELECT $1, g, w.words[1 + g % 16] || ' ' || w.words[1 + (g / 16) % 16] || ' ' || g,
              'Seeded by the benchmark: ' || w.words[1 + (g / 7) % 16] || ' seit gestern gestört; the ' || w.words[1 + (g / 3) % 16] || ' fails every hour.',
              (enum_range(NULL::ticket_priority))[1 + g % 4], (enum_range(NULL::ticket_category))[1 + g % 7], status,
              c.ids[1 + g % ${CLIENTS}], CASE WHEN g % 3 = 0 THEN NULL ELSE u.ids[1 + g % ${USERS}] END,
              at, at, CASE WHEN status IN ('resolved', 'closed') THEN at END, CASE WHEN status = 'closed' THEN at END
         FROM t, c, u, w`,
      [tenantId, tickets],
    );
    await db.query('INSERT INTO ticket_sequences (tenant_id, last_number) VALUES ($1, $2)', [tenantId, tickets]);
    // SLA clocks on every other working ticket (for GET /tickets?sla_status=at_risk&sort=sla_due_at):
    // first responses due from an hour ago to three hours ahead, so about a quarter of them are at risk.
    await db.query(
      `INSERT INTO ticket_slas (ticket_id, ticket_created_at, tenant_id, policy_id, targets, first_response_due_at, resolution_due_at)
       SELECT id, created_at, tenant_id, gen_random_uuid(), '{}'::jsonb, now() + make_interval(mins => number % 240 - 60), now() + interval '2 days'
         FROM tickets WHERE tenant_id = $1 AND status IN ('open', 'in_progress') AND number % 2 = 0`,
      [tenantId],
    );
    await db.query('COMMIT');
    const ids = await db.query('SELECT id FROM tickets WHERE tenant_id = $1 ORDER BY random() LIMIT 1000', [tenantId]);
    const clients = await db.query('SELECT id FROM clients WHERE tenant_id = $1 ORDER BY created_at', [tenantId]);
    return { ticketIds: ids.rows.map((r) => r.id), clientIds: clients.rows.map((r) => r.id) };
  } finally {
    await db.end();
  }
}

module.exports = { seedTenant };
