'use strict';
// Lists flat by tenant size, desk's part (bench/flat/run.js times these cases at 10k and at the large
// size). One tenant seeded with SQL only (generate_series); the triggers keep ticket_counts,
// list_counts and time_entry_minutes as they do for the API's writes. Both sizes have the same shape:
// tickets exactly as bench/seed.js spreads them (status, priority, category over 50 clients and 20
// technicians, the same words for `q`, SLA clocks on every other working ticket), time entries over
// the same 365 days on those clients and technicians, so every filter value matches the same
// fraction of rows at 10k as at the large size.
//   large false: 10,000 rows per list; true: 1,000,000 tickets and time entries, 100,000 of the others.
//   BENCH_FLAT_DESK_ROWS / BENCH_FLAT_DESK_BIG_ROWS: other sizes (a quick check), for the large seed.

const CLIENTS_WITH_TICKETS = 50;
const TECHNICIANS = 20;
// Rows per INSERT: a statement trigger holds its transition table's rows in memory once more.
const BATCH = 100_000;

/** Runs `sql` (which reads $2 as the batch's first g and $3 as its last) over 1..rows in batches. */
async function inBatches(client, rows, sql, values) {
  for (let first = 1; first <= rows; first += BATCH) {
    await client.query(sql, [...values, first, Math.min(rows, first + BATCH - 1)]);
  }
}

/** An id near the end of a list in its order (the 51st from its end): a deep keyset page. */
async function nearEnd(client, sql, values) {
  return (await client.query(`${sql} OFFSET 50 LIMIT 1`, values)).rows[0].id;
}

async function seedRows(client, tenantId, { large }, indexed) {
  const others = Number((large ? process.env.BENCH_FLAT_DESK_ROWS : undefined) ?? (large ? 100_000 : 10_000));
  const big = Number((large ? process.env.BENCH_FLAT_DESK_BIG_ROWS : undefined) ?? (large ? 1_000_000 : 10_000));
  const t = [tenantId];
  await client.query(
    `INSERT INTO tenants (id, slug, name) VALUES ($1::uuid, 'flat-' || $1::text, 'flat-' || $1::text) ON CONFLICT (id) DO NOTHING`,
    t,
  );

  // Clients, users, API clients, calendars and SLA policies: `others` each, oldest first.
  await client.query(
    `INSERT INTO clients (tenant_id, name, email, created_at, updated_at)
     SELECT $1, 'Client ' || g, 'it@client' || g || '.example', now() - make_interval(secs => $2 - g), now() - make_interval(secs => $2 - g)
       FROM generate_series(1, $2::int) g`,
    [tenantId, others],
  );
  // Every 10th user (past the technicians) deactivated: GET /users lists the active ones.
  await client.query(
    `INSERT INTO users (tenant_id, name, email, active, deactivated_at, created_at, updated_at)
     SELECT $1, 'Technician ' || g, 'tech' || g || '@bench.example', NOT (g % 10 = 0 AND g > ${TECHNICIANS}),
            CASE WHEN g % 10 = 0 AND g > ${TECHNICIANS} THEN now() END, now() - make_interval(secs => $2 - g), now() - make_interval(secs => $2 - g)
       FROM generate_series(1, $2::int) g`,
    [tenantId, others],
  );
  // Every 20th API client deleted (revoked): GET /api-clients lists the live ones.
  await client.query(
    `INSERT INTO api_clients (tenant_id, client_id, secret_hash, name, scopes, revoked_at, created_at, updated_at)
     SELECT $1::uuid, 'flat_' || $1::text || '_' || g, 'not-a-hash', 'Integration ' || g, '{read:tickets}', CASE WHEN g % 20 = 0 THEN now() END,
            now() - make_interval(secs => $2 - g), now() - make_interval(secs => $2 - g)
       FROM generate_series(1, $2::int) g`,
    [tenantId, others],
  );
  await client.query(
    `INSERT INTO calendars (tenant_id, name, time_zone, hours, holidays, closed_days, created_at, updated_at)
     SELECT $1, 'Calendar ' || g, 'Europe/Berlin',
            '{"mon":[{"start":"08:00","end":"17:00"}],"tue":[{"start":"08:00","end":"17:00"}],"wed":[{"start":"08:00","end":"17:00"}],"thu":[{"start":"08:00","end":"17:00"}],"fri":[{"start":"08:00","end":"15:00"}],"sat":[],"sun":[]}',
            '{"country":"DE","region":"DE-BY"}', '{2026-12-24,2026-12-31}', now() - make_interval(secs => $2 - g), now() - make_interval(secs => $2 - g)
       FROM generate_series(1, $2::int) g`,
    [tenantId, others],
  );
  await client.query(
    `INSERT INTO sla_policies (tenant_id, name, targets, created_at, updated_at)
     SELECT $1, 'Policy ' || g,
            '{"urgent":{"first_response_minutes":30,"resolution_minutes":240},"high":{"first_response_minutes":60,"resolution_minutes":480},"normal":{"first_response_minutes":240,"resolution_minutes":1440},"low":{"first_response_minutes":480,"resolution_minutes":2880}}',
            now() - make_interval(secs => $2 - g), now() - make_interval(secs => $2 - g)
       FROM generate_series(1, $2::int) g`,
    [tenantId, others],
  );

  // Tickets: bench/seed.js's shape (its SQL, in batches), on the 50 oldest clients and 20 oldest users.
  const refs = (
    await client.query(
      `SELECT (SELECT array_agg(id ORDER BY created_at, id) FROM (SELECT id, created_at FROM clients WHERE tenant_id = $1 ORDER BY created_at, id LIMIT ${CLIENTS_WITH_TICKETS}) c) AS clients,
              (SELECT array_agg(id ORDER BY created_at, id) FROM (SELECT id, created_at FROM users WHERE tenant_id = $1 ORDER BY created_at, id LIMIT ${TECHNICIANS}) u) AS users`,
      t,
    )
  ).rows[0];
  // search_vector as the tickets_search_vector trigger makes it (ticket_search_document of title and
  // description), assembled from the vectors of the 256 word pairs of titles and of descriptions and
  // the title's number: the same tsvector (positions and weights), without parsing 1M texts.
  // Each description also ends in eight keywords drawn from a vocabulary of 20,000 with a long tail
  // (rank e^(u·ln 20000), u spread evenly by g): sixteen words alone would leave PostgreSQL's
  // statistics without the rare words every real helpdesk has, and it would guess a word no ticket
  // holds to be common. Their lexemes join the vector without positions (the trigger would add them).
  const keywords = `ARRAY(SELECT 'kw' || floor(exp(((g::bigint * 2654435761 + k * 40503) % 1000003) / 1000003.0 * ln(20000)))::int
                            FROM generate_series(1, 8) k)`;
  await client.query(
    `CREATE TEMP TABLE flat_words AS SELECT ARRAY['Drucker', 'printer', 'network', 'VPN', 'Outlook', 'Störung', 'Laptop', 'Monitor', 'Passwort', 'Firewall',
                                                  'Server', 'Backup', 'Mail', 'Scanner', 'Telefon', 'Lizenz'] AS words`,
  );
  await client.query(
    `CREATE TEMP TABLE flat_titles AS
     SELECT i, j, to_tsvector('german', t) AS ge, to_tsvector('english', t) AS en, to_tsvector('simple', t) AS si
       FROM (SELECT i, j, w.words[i] || ' ' || w.words[j] AS t FROM flat_words w, generate_series(1, 16) i, generate_series(1, 16) j) x`,
  );
  await client.query(
    `CREATE TEMP TABLE flat_descriptions AS
     SELECT i, j, d, setweight(to_tsvector('german', d) || to_tsvector('english', d) || to_tsvector('simple', d), 'B') AS v
       FROM (SELECT i, j, 'Seeded by the benchmark: ' || w.words[i] || ' seit gestern gestört; the ' || w.words[j] || ' fails every hour.' AS d
               FROM flat_words w, generate_series(1, 16) i, generate_series(1, 16) j) x`,
  );
  await inBatches(
    client,
    big,
    `WITH t AS (
       SELECT g, (enum_range(NULL::ticket_status))[1 + (g / 3) % 5] AS status, now() - make_interval(secs => $4 - g) AS at, (g::text || ':1')::tsvector AS n,
              ${keywords} AS kw
         FROM generate_series($5::int, $6::int) g)
     INSERT INTO tickets (tenant_id, number, title, description, priority, category, status, client_id, assignee_id,
                          created_at, updated_at, resolved_at, closed_at, search_vector)
     SELECT $1, g, w.words[1 + g % 16] || ' ' || w.words[1 + (g / 16) % 16] || ' ' || g, d.d || ' ' || array_to_string(kw, ' '),
            (enum_range(NULL::ticket_priority))[1 + g % 4], (enum_range(NULL::ticket_category))[1 + g % 7], status,
            ($2::uuid[])[1 + g % ${CLIENTS_WITH_TICKETS}], CASE WHEN g % 3 = 0 THEN NULL ELSE ($3::uuid[])[1 + g % ${TECHNICIANS}] END,
            at, at, CASE WHEN status IN ('resolved', 'closed') THEN at END, CASE WHEN status = 'closed' THEN at END,
            setweight(ti.ge || n || ti.en || n || ti.si || n, 'A') || d.v || setweight(array_to_tsvector(kw), 'B')
       FROM t CROSS JOIN flat_words w
       JOIN flat_titles ti ON ti.i = 1 + g % 16 AND ti.j = 1 + (g / 16) % 16
       JOIN flat_descriptions d ON d.i = 1 + (g / 7) % 16 AND d.j = 1 + (g / 3) % 16`,
    [tenantId, refs.clients, refs.users, big],
  );
  await client.query('DROP TABLE flat_words, flat_titles, flat_descriptions');
  await client.query(
    `INSERT INTO ticket_sequences (tenant_id, last_number) VALUES ($1, $2) ON CONFLICT (tenant_id) DO UPDATE SET last_number = EXCLUDED.last_number`,
    [tenantId, big],
  );
  await client.query(
    `INSERT INTO ticket_slas (ticket_id, ticket_created_at, tenant_id, policy_id, targets, first_response_due_at, resolution_due_at)
     SELECT id, created_at, tenant_id, gen_random_uuid(), '{}'::jsonb, now() + make_interval(mins => number % 240 - 60), now() + interval '2 days'
       FROM tickets WHERE tenant_id = $1 AND status IN ('open', 'in_progress') AND number % 2 = 0`,
    t,
  );

  // Comments: 10 on each of the newest tenth of `others` tickets (`others` in all); then those
  // tickets' vectors once, with their comments (what the comments' trigger would have made).
  const commented = Math.max(1, Math.floor(others / 10));
  await client.query(
    `INSERT INTO ticket_comments (tenant_id, ticket_id, body, internal, author, created_at)
     SELECT $1, tk.id, 'Comment ' || c || ': rebooted the ' || (ARRAY['Drucker', 'printer', 'router', 'Laptop'])[1 + c % 4] || ', waiting for the user.', c % 3 = 0, 'bench',
            tk.created_at + make_interval(secs => c)
       FROM tickets tk CROSS JOIN generate_series(1, 10) c
      WHERE tk.tenant_id = $1 AND tk.number > $2::int - $3::int`,
    [tenantId, big, commented],
  );
  // Every commented ticket has the same ten bodies: its vector is its own with the comments' (weight
  // C) appended, as ticket_search_document makes it (checked equal by the seed's test run).
  await client.query(
    `WITH c AS (SELECT string_agg('Comment ' || c || ': rebooted the ' || (ARRAY['Drucker', 'printer', 'router', 'Laptop'])[1 + c % 4] || ', waiting for the user.', E'\\n' ORDER BY c) AS text
                  FROM generate_series(1, 10) c)
     UPDATE tickets SET search_vector = search_vector || setweight(to_tsvector('german', c.text) || to_tsvector('english', c.text) || to_tsvector('simple', c.text), 'C')
       FROM c WHERE tenant_id = $1 AND number > $2::int - $3::int`,
    [tenantId, big, commented],
  );

  // Time entries: `big`, one per ticket in turn (the ticket's client), on the 20 technicians, over
  // the 365 days before today, 3 in 4 billable.
  await inBatches(
    client,
    big,
    `INSERT INTO time_entries (tenant_id, ticket_id, client_id, user_id, minutes, date, billable, note, created_at, updated_at)
     SELECT $1, tk.id, tk.client_id, ($2::uuid[])[1 + g % ${TECHNICIANS}], 15 + (g % 8) * 15, current_date - (g % 365), g % 4 <> 0, 'Work ' || g,
            now() - make_interval(secs => $3 - g), now() - make_interval(secs => $3 - g)
       FROM generate_series($4::int, $5::int) g
       JOIN tickets tk ON tk.tenant_id = $1 AND tk.number = 1 + (g - 1) % $3`,
    [tenantId, refs.users, big],
  );

  // Contacts: `big`, on the 50 clients in turn, each with its one address; 20 first names by 50
  // surnames, so a surname names 2 % of them at either size and an address one contact.
  await inBatches(
    client,
    big,
    `WITH c AS (
       SELECT g, (ARRAY['Anna', 'Ben', 'Clara', 'David', 'Emma', 'Felix', 'Greta', 'Hans', 'Ida', 'Jonas', 'Karla', 'Lukas', 'Mia', 'Noah', 'Olga',
                        'Paul', 'Rosa', 'Simon', 'Tilda', 'Uwe'])[1 + g % 20] AS first,
              'Surname' || (g / 20) % 50 AS last, now() - make_interval(secs => $3 - g) AS at
         FROM generate_series($4::int, $5::int) g)
     INSERT INTO contacts (tenant_id, client_id, name, email, search_words, created_at, updated_at)
     SELECT $1, ($2::uuid[])[1 + g % ${CLIENTS_WITH_TICKETS}], first || ' ' || last, email, contact_search_words(first || ' ' || last, ARRAY[email]), at, at
       FROM c, LATERAL (SELECT lower(first || '.' || last || '-' || g) || '@client' || g % ${CLIENTS_WITH_TICKETS} || '.example' AS email) e`,
    [tenantId, refs.clients, big],
  );
  await client.query(
    `INSERT INTO contact_emails (tenant_id, email, contact_id) SELECT tenant_id, email, id FROM contacts WHERE tenant_id = $1`,
    t,
  );

  await indexed();
  const [ticket] = (await client.query(`SELECT id FROM tickets WHERE tenant_id = $1 AND number = $2`, [tenantId, big]))
    .rows;
  const [calendar] = (
    await client.query(`SELECT id FROM calendars WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, t)
  ).rows;
  const today = (await client.query(`SELECT current_date::text AS today, (current_date - 29)::text AS month_ago`))
    .rows[0];
  const oldestFirst = (table, where = '') =>
    nearEnd(client, `SELECT id FROM ${table} WHERE tenant_id = $1 ${where} ORDER BY created_at, id`, t);
  return {
    clientId: refs.clients[0],
    userId: refs.users[0],
    ticketId: ticket.id,
    calendarId: calendar.id,
    from: today.month_ago,
    to: today.today,
    after: {
      tickets: await oldestFirst('tickets'),
      timeEntries: await nearEnd(
        client,
        `SELECT id FROM time_entries WHERE tenant_id = $1 ORDER BY date, created_at, id`,
        t,
      ),
      clients: await oldestFirst('clients'),
      contacts: await oldestFirst('contacts'),
      users: await oldestFirst('users', 'AND active'),
      apiClients: await oldestFirst('api_clients', 'AND revoked_at IS NULL'),
      calendars: await oldestFirst('calendars'),
      slaPolicies: await oldestFirst('sla_policies'),
    },
  };
}

/** The counters of the tenant's lists, counted afresh: what the triggers would have kept. */
async function count(client, tenantId) {
  const t = [tenantId];
  await client.query(`DELETE FROM ticket_counts WHERE tenant_id = $1`, t);
  await client.query(
    `INSERT INTO ticket_counts (tenant_id, dimension, value, count)
     SELECT $1::uuid, k.dimension, k.value, count(*)
       FROM tickets tk CROSS JOIN LATERAL (VALUES ('all', ''), ('status', tk.status::text), ('priority', tk.priority::text), ('category', tk.category::text),
                                                  ('client_id', tk.client_id::text), ('assignee_id', tk.assignee_id::text)) AS k(dimension, value)
      WHERE tk.tenant_id = $1 AND k.value IS NOT NULL GROUP BY 1, 2, 3`,
    t,
  );
  await client.query(`DELETE FROM ticket_sla_due_counts WHERE tenant_id = $1`, t);
  await client.query(
    `INSERT INTO ticket_sla_due_counts (tenant_id, bucket, count)
     SELECT $1::uuid, ticket_sla_due_bucket(s.next_due_at), count(*) FROM ticket_slas s
      WHERE s.tenant_id = $1 AND ticket_sla_due_counted(s)
      GROUP BY 2`,
    t,
  );
  await client.query(`DELETE FROM list_counts WHERE tenant_id = $1`, t);
  await client.query(
    `INSERT INTO list_counts (tenant_id, list, dimension, value, count)
     SELECT $1::uuid, 'clients', 'all', '', count(*) FROM clients WHERE tenant_id = $1
     UNION ALL SELECT $1::uuid, 'contacts', 'all', '', count(*) FROM contacts WHERE tenant_id = $1
     UNION ALL SELECT $1::uuid, 'contacts', 'client_id', client_id::text, count(*) FROM contacts WHERE tenant_id = $1 AND client_id IS NOT NULL GROUP BY client_id
     UNION ALL SELECT $1::uuid, 'calendars', 'all', '', count(*) FROM calendars WHERE tenant_id = $1
     UNION ALL SELECT $1::uuid, 'sla_policies', 'all', '', count(*) FROM sla_policies WHERE tenant_id = $1
     UNION ALL SELECT $1::uuid, 'users', 'all', '', count(*) FROM users WHERE tenant_id = $1
     UNION ALL SELECT $1::uuid, 'users', 'active', active::text, count(*) FROM users WHERE tenant_id = $1 GROUP BY active
     UNION ALL SELECT $1::uuid, 'api_clients', 'all', '', count(*) FROM api_clients WHERE tenant_id = $1
     UNION ALL SELECT $1::uuid, 'api_clients', 'live', (revoked_at IS NULL)::text, count(*) FROM api_clients WHERE tenant_id = $1 GROUP BY revoked_at IS NULL
     UNION ALL SELECT $1::uuid, 'time_entries', 'all', '', count(*) FROM time_entries WHERE tenant_id = $1
     UNION ALL SELECT $1::uuid, 'time_entries', 'client_id', client_id::text, count(*) FROM time_entries WHERE tenant_id = $1 GROUP BY client_id
     UNION ALL SELECT $1::uuid, 'time_entries', 'user_id', user_id::text, count(*) FROM time_entries WHERE tenant_id = $1 GROUP BY user_id
     UNION ALL SELECT $1::uuid, 'time_entries', 'date', date::text, count(*) FROM time_entries WHERE tenant_id = $1 GROUP BY date
     UNION ALL SELECT $1::uuid, 'time_entries', 'billable', billable::text, count(*) FROM time_entries WHERE tenant_id = $1 GROUP BY billable`,
    t,
  );
  await client.query(`DELETE FROM list_counts WHERE tenant_id = $1 AND count = 0`, t);
  await client.query(`DELETE FROM time_entry_minutes WHERE tenant_id = $1`, t);
  await client.query(
    `INSERT INTO time_entry_minutes (tenant_id, dimension, value, minutes, billable_minutes)
     SELECT $1::uuid, k.dimension, k.value, sum(e.minutes), coalesce(sum(e.minutes) FILTER (WHERE e.billable), 0)
       FROM time_entries e CROSS JOIN LATERAL (VALUES ('all', ''), ('client_id', e.client_id::text), ('user_id', e.user_id::text),
                                                      ('date', e.date::text), ('billable', e.billable::text)) AS k(dimension, value)
      WHERE e.tenant_id = $1 GROUP BY 1, 2, 3`,
    t,
  );
}

/**
 * Seeds with the session's triggers off (session_replication_role = replica: no per-row search
 * trigger, no statement triggers holding a million rows as JSON, no foreign-key checks of rows
 * made consistent by construction), then counts the counters once, as the migration's backfill
 * does: through the triggers, a million tickets take too long to seed for every run. The triggers
 * themselves are tested through the API (services/desk/test/list-totals.test.ts).
 */
async function seed(client, tenantId, options) {
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL session_replication_role = replica`);
    await client.query(`SET LOCAL maintenance_work_mem = '256MB'`);
    // The big tables' secondary indexes (not their keys and unique constraints, which the seed's own
    // joins use) are built once after the rows, the way a restore does: maintaining a GIN and six
    // btrees row by row was most of a million tickets' time. Rolled back with the rest on failure.
    const { rows: indexes } = await client.query(
      `SELECT indexrelid::regclass::text AS name, pg_get_indexdef(indexrelid) AS definition FROM pg_index
        WHERE indrelid IN ('tickets'::regclass, 'time_entries'::regclass, 'contacts'::regclass) AND NOT indisprimary AND NOT indisunique`,
    );
    for (const index of indexes) await client.query(`DROP INDEX ${index.name}`);
    const params = await seedRows(client, tenantId, options, async () => {
      for (const index of indexes) await client.query(index.definition);
    });
    await count(client, tenantId);
    await client.query('COMMIT');
    return params;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

function cases(p) {
  const list = (path, ...filters) => [
    `${path}?per_page=25`,
    ...filters.map((filter) => `${path}?per_page=25&${filter}`),
  ];
  return [
    ...list(
      '/tickets',
      'status=open',
      'priority=high',
      'category=network',
      `client_id=${p.clientId}`,
      `assignee_id=${p.userId}`,
      // A word in a fifth of the tickets: the search's cost follows its matches (212,763 at 1M).
      'q=Drucker',
      // Two words of a fifth of the tickets each, the last a prefix as typed: both in 6 % of them.
      'q=Drucker%20netw',
      // A word of every ticket ("Seeded by the benchmark") and one of a fifth: a fifth match.
      'q=benchmark%20Drucker',
      // A ticket's number and a word of its title (ticket 4242 is "network Firewall 4242"): one
      // match in either tenant, as a search for a number, a name or an error code mostly is.
      'q=4242%20network',
      // A word no ticket holds (a typo): no match, found so in the index at either size.
      'q=Xylophon',
      'sla_status=at_risk',
      `after=${p.after.tickets}`,
    ),
    ...list(
      '/time-entries',
      `client_id=${p.clientId}`,
      `user_id=${p.userId}`,
      'billable=true',
      `from=${p.from}`,
      `to=${p.from}`,
      `from=${p.from}&to=${p.to}`,
      `after=${p.after.timeEntries}`,
    ),
    ...list(`/tickets/${p.ticketId}/time-entries`),
    ...list(`/tickets/${p.ticketId}/comments`),
    ...list(
      '/contacts',
      `client_id=${p.clientId}`,
      // Contact 4242's address, exactly and as q: one contact at either size.
      'email=clara.surname12-4242%40client42.example',
      'q=clara.surname12-4242%40',
      // A surname: 2 % of the contacts at either size.
      'q=Surname7',
      `after=${p.after.contacts}`,
    ),
    ...list('/clients', `after=${p.after.clients}`),
    ...list('/users', `after=${p.after.users}`),
    ...list('/api-clients', `after=${p.after.apiClients}`),
    ...list('/calendars', `after=${p.after.calendars}`),
    ...list(`/calendars/${p.calendarId}/holidays`, 'year=2026'),
    ...list('/sla-policies', `after=${p.after.slaPolicies}`),
  ];
}

module.exports = {
  service: 'desk',
  // admin:tenant reads every list (API clients, calendars, SLA policies need it); the others for clarity.
  scope: 'read:tickets read:users admin:tenant',
  seed,
  cases,
};
