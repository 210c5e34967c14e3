'use strict';
// What PostgreSQL does for one page of desk's ticket list: desk's own statement (its tickets
// repository, as built), sent over a connection that EXPLAINs the page's statement before running
// it. Used by `pnpm bench` (the ratio half) and by the flat half's search cases, so both read the
// plan of the statement desk really sends.
const path = require('node:path');
const { createTicketsRepository } = require('../services/desk/dist/tickets/tickets.repository.js');
const { Kysely, PostgresDialect } = require(
  require.resolve('kysely', { paths: [path.join(__dirname, '../services/desk')] }),
);

/** The indexes a plan node and its children read. */
const indexesOf = (node) => [
  ...new Set([node['Index Name'], ...(node.Plans ?? []).flatMap(indexesOf)].filter(Boolean)),
];

/** The words desk searches for in `q` (tickets.service.ts splits it so). */
const wordsOf = (q) => q.match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];

/**
 * `{ scan, buffers, execution_ms }` of the page statement desk sends for `filters` (`q` as text,
 * the other filters as the repository takes them) for the tenant, over `client` (a connected pg
 * Client of desk's database); the search's word statements run unexplained.
 */
async function explainTicketPage(client, tenantId, filters) {
  let explained;
  const connection = {
    query: async (text, values) => {
      if (!explained && /ORDER BY/.test(text) && /LIMIT/.test(text) && !text.includes('string_agg')) {
        const [{ Plan: plan, 'Execution Time': ms }] = (
          await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values)
        ).rows[0]['QUERY PLAN'];
        explained = {
          scan: indexesOf(plan).join(', '),
          buffers: plan['Shared Hit Blocks'] + plan['Shared Read Blocks'],
          execution_ms: ms,
        };
      }
      return client.query(text, values);
    },
    release() {},
  };
  const explaining = new Kysely({
    dialect: new PostgresDialect({ pool: { connect: async () => connection, end: async () => {} } }),
  });
  const tickets = createTicketsRepository(explaining, explaining);
  const { q, ...rest } = filters;
  const query = q === undefined ? {} : await tickets.searchQuery(tenantId, wordsOf(q));
  await tickets.list(tenantId, { ...rest, ...query }, { page: 1, per_page: 25 });
  return explained;
}

module.exports = { explainTicketPage };
