'use strict';
// link's lists for bench/flat/run.js: one MSP tenant seeded with SQL only
// (generate_series; the triggers of migration 20261125153045_list_counts keep list_counts), 10,000
// rows per list for the small tenant and 100,000 for the large one, both of the same shape:
//   managed tenants  10 % suspended; 100 clients, so a client_id matches 1 %
//   connectors       one per managed tenant of the first half, two of the second (90 % enabled);
//                    a managed tenant has a connector or two at any size (its tenant_id total counts
//                    them through their index), and the first connector holds the per-connector lists:
//   sync runs        of that connector, 5 % failed
//   directory users  and groups of that connector's mirror (SCIM ids are UUIDs, as Entra's are)
//   onboardings, offboardings, moves  with 3 tasks each; 70 % completed, 10 % scheduled, 5 % each
//                    of in_progress, completed_with_errors, failed and cancelled
// Every list's rows are spread over the same two years. The schedule's first sync tick comes an
// hour after link starts (SYNC_INTERVAL), after the bench: the seeded connectors are never called.
// `scale` (BENCH_FLAT_SCALE) multiplies the sizes.

const DAYS = 730;

/** The id of the item `depth` from the end of the list `sql` selects (its `id`, in its order): a deep keyset page's `after`. */
async function nearTheEnd(client, sql, values, depth = 50) {
  const {
    rows: [{ count }],
  } = await client.query(`SELECT count(*)::int AS count FROM (${sql}) AS list`, values);
  const { rows } = await client.query(`${sql} OFFSET ${Math.max(0, count - depth)} LIMIT 1`, values);
  return rows[0].id;
}

module.exports = {
  service: 'link',
  scope: 'admin:tenant',

  async seed(client, tenantId, { large, scale = 1 }) {
    const n = Math.max(200, Math.round((large ? 100_000 : 10_000) * scale));
    // created_at of row i of n: spread evenly over the same DAYS whatever n, newest first at i = 1.
    const at = (i) => `now() - (${i}::float8 / ${n}) * interval '${DAYS} days'`;
    const id = (kind, i) => `md5($1::text || '${kind}' || ${i})::uuid`;
    const q = (sql) => client.query(sql, [tenantId]);
    const runStatus = (i) =>
      `(CASE WHEN ${i} % 20 = 0 THEN 'failed' WHEN ${i} % 20 = 1 THEN 'cancelled' WHEN ${i} % 20 = 2 THEN 'completed_with_errors' WHEN ${i} % 20 = 3 THEN 'in_progress'
             WHEN ${i} % 10 = 4 THEN 'scheduled' ELSE 'completed' END)`;

    await q(`INSERT INTO managed_tenants (id, owner_tenant_id, name, domain, client_id, status, created_at, updated_at)
      SELECT ${id('mt', 'i')}, $1::uuid, 'Client ' || i, 'c' || i || '.onmicrosoft.com', ${id('client', 'i % 100')},
             (CASE WHEN i % 10 = 0 THEN 'suspended' ELSE 'active' END)::managed_tenant_status, ${at('i')}, ${at('i')}
      FROM generate_series(1, ${n}) AS i`);
    const half = Math.floor(n / 2);
    const connectors = n;
    // Connector i belongs to managed tenant i (i <= half), or to half + ceil((i - half) / 2).
    await q(`INSERT INTO connectors (id, owner_tenant_id, managed_tenant_id, type, name, enabled, base_url, bearer_token_encrypted, created_at, updated_at)
      SELECT ${id('conn', 'i')}, $1::uuid, ${id('mt', `(CASE WHEN i <= ${half} THEN i ELSE ${half} + (i - ${half} + 1) / 2 END)`)}, 'scim', 'Directory ' || i, i % 10 <> 0,
             'https://scim' || i || '.example.com/scim/v2', 'v1.AAAA.AAAA.AAAA', ${at('i')}, ${at('i')}
      FROM generate_series(1, ${connectors}) AS i`);
    const {
      rows: [first],
    } = await q(`SELECT id::text FROM connectors WHERE id = ${id('conn', 1)}`);
    const connectorId = first.id;
    await q(`INSERT INTO sync_runs (id, connector_id, status, trigger, attempts, users_seen, groups_seen, mode, created_at, started_at, finished_at, error)
      SELECT ${id('sync', 'i')}, ${id('conn', 1)}, (CASE WHEN i % 20 = 0 THEN 'failed' ELSE 'succeeded' END)::sync_run_status,
             (CASE WHEN i % 5 = 0 THEN 'manual' ELSE 'schedule' END)::sync_trigger, 1, 10000, 500, 'delta'::sync_mode, ${at('i')}, ${at('i')}, ${at('i')} + interval '20 seconds',
             CASE WHEN i % 20 = 0 THEN 'the directory answered 503' END
      FROM generate_series(1, ${n}) AS i`);
    await q(`INSERT INTO directory_users (connector_id, scim_id, external_id, user_name, display_name, email, active, groups, synced_at)
      SELECT ${id('conn', 1)}, ${id('user', 'i')}::text, 'ext-' || i, 'user' || i || '@contoso.example', 'User ' || i, 'user' || i || '@contoso.example', i % 25 <> 0,
             ARRAY['All staff', 'Team ' || (i % 50)], now()
      FROM generate_series(1, ${n}) AS i`);
    await q(`INSERT INTO directory_groups (connector_id, scim_id, display_name, members, member_count, synced_at)
      SELECT ${id('conn', 1)}, ${id('group', 'i')}::text, 'Group ' || i, ARRAY[${id('user', 'i')}::text], 1, now()
      FROM generate_series(1, ${n}) AS i`);

    const open = (i) => `${runStatus(i)} IN ('scheduled', 'in_progress')`;
    await q(`INSERT INTO onboardings (id, owner_tenant_id, managed_tenant_id, status, first_name, last_name, email, department, manager_id, start_date, bundles, laptop, badge, phone_extension, open_email, created_at, updated_at)
      SELECT ${id('onb', 'i')}, $1::uuid, ${id('mt', 'i')}, ${runStatus('i')}::onboarding_status, 'Ada', 'Lovelace ' || i, 'ada' || i || '@contoso.example', 'Engineering', ${id('user', 1)},
             (${at('i')})::date + 14, ARRAY['M365 E3'], 'ThinkPad T14', true, false, CASE WHEN ${open('i')} THEN 'ada' || i || '@contoso.example' END, ${at('i')}, ${at('i')}
      FROM generate_series(1, ${n}) AS i`);
    await q(`INSERT INTO offboardings (id, owner_tenant_id, user_id, successor_id, email, managed_tenant_id, last_day, mailbox_retention_days, status, open_user_id, created_at, updated_at)
      SELECT ${id('off', 'i')}, $1::uuid, ${id('leaver', 'i')}, ${id('user', 1)}, 'lea' || i || '@contoso.example', ${id('mt', 'i')}, (${at('i')})::date + 14, 30,
             ${runStatus('i')}::offboarding_status, CASE WHEN ${open('i')} THEN ${id('leaver', 'i')} END, ${at('i')}, ${at('i')}
      FROM generate_series(1, ${n}) AS i`);
    await q(`INSERT INTO moves (id, owner_tenant_id, user_id, email, managed_tenant_id, effective_date, department, job_title, bundles_add, bundles_remove, status, open_key, created_at, updated_at)
      SELECT ${id('move', 'i')}, $1::uuid, ${id('mover', 'i')}, 'mo' || i || '@contoso.example', ${id('mt', 'i')}, (${at('i')})::date + 14, 'Sales', 'Account Executive', ARRAY['Sales'], ARRAY[]::text[],
             ${runStatus('i')}::move_status, CASE WHEN ${open('i')} THEN ${id('mover', 'i')}::text || ' ' || ((${at('i')})::date + 14)::text END, ${at('i')}, ${at('i')}
      FROM generate_series(1, ${n}) AS i`);
    // The tasks' three foreign keys would be checked row by row, ~900,000 look-ups that only say
    // what the SELECTs above already guarantee: skipped for these statements (as pg_restore does).
    await client.query('SET session_replication_role = replica');
    for (const [kind, column, names] of [
      ['onb', 'onboarding_id', ['create_account', 'assign_bundles', 'equipment_ticket']],
      ['off', 'offboarding_id', ['reassign_tickets', 'disable_account', 'delegate_mailbox']],
      ['move', 'move_id', ['update_account', 'update_groups', 'equipment_ticket']],
    ]) {
      await q(`INSERT INTO run_tasks (${column}, position, name, status, due_at, attempts, started_at, finished_at)
        SELECT ${id(kind, 'i')}, p - 1, (ARRAY['${names.join("','")}'])[p], (CASE WHEN ${open('i')} THEN 'pending' ELSE 'succeeded' END)::run_task_status,
               ${at('i')}, 1, CASE WHEN NOT ${open('i')} THEN ${at('i')} END, CASE WHEN NOT ${open('i')} THEN ${at('i')} + interval '1 minute' END
        FROM generate_series(1, ${n}) AS i CROSS JOIN generate_series(1, 3) AS p`);
    }
    await client.query('RESET session_replication_role');

    const byCreated = (table, where = 'owner_tenant_id = $1::uuid') =>
      nearTheEnd(client, `SELECT id FROM ${table} WHERE ${where} ORDER BY created_at DESC, id DESC`, [tenantId]);
    const connectorWhere = `connector_id = md5($1::text || 'conn' || 1)::uuid`;
    return {
      clientId: (await q(`SELECT ${id('client', 7)}::text AS id`)).rows[0].id,
      // A managed tenant of the second half: two connectors, one of them enabled or both.
      managedTenantId: (await q(`SELECT ${id('mt', half + 3)}::text AS id`)).rows[0].id,
      connectorId,
      after: {
        tenants: await byCreated('managed_tenants'),
        connectors: await nearTheEnd(
          client,
          `SELECT id FROM connectors WHERE owner_tenant_id = $1::uuid AND enabled ORDER BY created_at DESC, id DESC`,
          [tenantId],
        ),
        syncs: await byCreated('sync_runs', connectorWhere),
        users: await nearTheEnd(
          client,
          `SELECT scim_id AS id FROM directory_users WHERE ${connectorWhere} ORDER BY user_name, scim_id`,
          [tenantId],
        ),
        groups: await nearTheEnd(
          client,
          `SELECT scim_id AS id FROM directory_groups WHERE ${connectorWhere} ORDER BY display_name, scim_id`,
          [tenantId],
        ),
        onboardings: await byCreated('onboardings'),
        offboardings: await byCreated('offboardings'),
        moves: await byCreated('moves'),
      },
    };
  },

  cases(p) {
    const c = `/connectors/${p.connectorId}`;
    return [
      '/tenants?per_page=25',
      '/tenants?per_page=25&status=suspended',
      `/tenants?per_page=25&client_id=${p.clientId}`,
      `/tenants?per_page=25&after=${p.after.tenants}`,
      '/connectors?per_page=25',
      '/connectors?per_page=25&include_disabled=true',
      `/connectors?per_page=25&tenant_id=${p.managedTenantId}`,
      `/connectors?per_page=25&after=${p.after.connectors}`,
      `${c}/syncs?per_page=25`,
      `${c}/syncs?per_page=25&after=${p.after.syncs}`,
      `${c}/users?per_page=25`,
      `${c}/users?per_page=25&after=${p.after.users}`,
      `${c}/groups?per_page=25`,
      `${c}/groups?per_page=25&after=${p.after.groups}`,
      ...['onboardings', 'offboardings', 'moves'].flatMap((list) => [
        `/${list}?per_page=25`,
        `/${list}?per_page=25&status=failed`,
        `/${list}?per_page=25&after=${p.after[list]}`,
      ]),
    ];
  },
};
