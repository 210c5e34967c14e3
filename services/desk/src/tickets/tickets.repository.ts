import { afterKeyOf, isoTimestampSql, plannedPerCall, type ListOrder } from '@msp/db';
import { announceEventRecorded, type EventHead } from '@msp/events';
import { listWindow, pageWindow, unknownAfterItem, type PageRequest } from '@msp/http';
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db';
import { eventInsertFrom } from '../events/event-insert';
import { noPolicyAppliesSql } from '../sla-policies/sla-policies.repository';
import {
  SLA_JSON_SQL,
  TICKET_SLA_COLUMN,
  TICKET_SLA_JOIN,
  slaNextDueOrder,
  slaStatusSql,
  slaStatusTotalSql,
} from '../sla/ticket-slas.repository';
import type { AttachmentRef } from '../attachments/attachment.schemas';
import type { SlaListing, TicketSla } from '../sla/sla.schemas';
import { SEARCH_WINDOW, type Ticket, type TicketFilters, type TicketSearch } from './ticket.schemas';
import { WORKING_STATUSES, type StatusTimestamps, type TicketStatus } from './ticket-status';

/** A ticket without its `sla` (the SLA clocks live in ticket_slas). */
export type TicketCore = Omit<Ticket, 'sla'>;

/*
 * Every read of a ticket selects the same columns (TICKET_COLUMNS): the API's names, enums as
 * text, the requester as the API shows it and the `sla` built by PostgreSQL from the clocks, so
 * that one row type and one mapper (toTicket) serve every read, inside a transaction or not.
 */

/** The requester as the API shows it, `{id, name, email}`, or null. */
const REQUESTER_SQL = `(SELECT jsonb_build_object('id', r.id, 'name', r.name, 'email', r.email::text) FROM contacts r WHERE r.id = tickets.requester_id)`;

/**
 * The timestamps in the API's text, written by PostgreSQL: pg would parse each into a Date for
 * toTicket to format again, four per ticket, which a page of them pays for on every request.
 */
const TIMESTAMPS = ['created_at', 'updated_at', 'resolved_at', 'closed_at']
  .map((column) => `${isoTimestampSql(column)} AS ${column}`)
  .join(', ');

/** The ticket's columns as the API names them; its `sla` as `sla` gives it: from the clocks joined as `s` (TICKET_SLA_JOIN), or a subselect. */
const ticketColumns = (sla: string) =>
  sql.raw(`tickets.id, number, title, description, priority::text AS priority, category::text AS category,
  status::text AS status, client_id, assignee_id, ${TIMESTAMPS},
  merged_into_id, coalesce(merged_ids, '{}') AS merged_ids, ${REQUESTER_SQL} AS requester, coalesce(cc, '{}') AS cc,
  coalesce(cc_suggested, '{}') AS cc_suggested, source, mailbox_id, follow_up_of, attachments, ${sla}`);

/** Read as `FROM tickets ${SLA_JOIN}`. */
const TICKET_COLUMNS = ticketColumns(`${SLA_JSON_SQL} AS sla`);
const SLA_JOIN = sql.raw(TICKET_SLA_JOIN);
/** A RETURNING's (no join there): the clocks by a subselect. */
const TICKET_RETURNING = ticketColumns(TICKET_SLA_COLUMN);
/** The new ticket as the API answers it, as JSON (for the event a create records in its statement): its row, timestamps already in the API's text. */
const TICKET_JSON = sql.raw('to_jsonb(ticket)');
/** searchQuery's `narrow`: the most tickets the words before the last may match for list() to search through them. */
const NARROW_MATCHES = 500;
/** searchQuery's `walk`: the most tickets a tenant may have for list() to search it by reading each of them. */
const WALK_TICKETS = 20_000;
/** The list's default order, which `after` pages: newest first, the id breaking ties. */
const KEYSET_ORDER: ListOrder = { columns: ['tickets.created_at', 'tickets.id'], direction: 'desc' };

interface TicketSqlRow {
  id: string;
  number: number;
  title: string;
  description: string;
  priority: Ticket['priority'];
  category: Ticket['category'];
  status: Ticket['status'];
  client_id: string;
  assignee_id: string | null;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
  closed_at: string | null;
  merged_into_id: string | null;
  merged_ids: string[];
  requester: Ticket['requester'];
  cc: string[];
  cc_suggested: string[];
  source: Ticket['source'];
  mailbox_id: string | null;
  follow_up_of: string | null;
  attachments: AttachmentRef[];
  sla: TicketSla | null;
}

/** The stored ticket in the API's shape: the one place rows become responses. */
function toTicket(row: TicketSqlRow): Ticket {
  return {
    id: row.id,
    number: row.number,
    title: row.title,
    description: row.description,
    priority: row.priority,
    category: row.category,
    status: row.status,
    client_id: row.client_id,
    assignee_id: row.assignee_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    resolved_at: row.resolved_at,
    closed_at: row.closed_at,
    merged_into_id: row.merged_into_id,
    merged_ids: row.merged_ids,
    requester: row.requester ?? null,
    cc: row.cc,
    cc_suggested: row.cc_suggested,
    source: row.source,
    mailbox_id: row.mailbox_id,
    follow_up_of: row.follow_up_of,
    attachments: row.attachments ?? [],
    sla: row.sla ?? null,
  };
}

/** Each list filter as SQL; the casts let PostgreSQL use the (tenant_id, <filter>, created_at, id) indexes. */
const FILTER_SQL: Record<keyof TicketFilters, (value: string) => RawBuilder<boolean>> = {
  status: (value) => sql<boolean>`status = ${value}::ticket_status`,
  priority: (value) => sql<boolean>`priority = ${value}::ticket_priority`,
  category: (value) => sql<boolean>`category = ${value}::ticket_category`,
  client_id: (value) => sql<boolean>`client_id = ${value}::uuid`,
  assignee_id: (value) => sql<boolean>`assignee_id = ${value}::uuid`,
  requester_id: (value) => sql<boolean>`requester_id = ${value}::uuid`,
  source: (value) => sql<boolean>`source = ${value}`,
};
/** The filters ticket_counts keeps a count of; the others count their tickets. */
const COUNTED_FILTERS = new Set(['status', 'priority', 'category', 'client_id', 'assignee_id']);

export interface TicketWrite {
  title?: string;
  description?: string;
  priority?: Ticket['priority'];
  category?: Ticket['category'];
  status?: TicketStatus;
  clientId?: string;
  assigneeId?: string | null;
  mergedIntoId?: string;
  mergedIds?: string[];
  requesterId?: string | null;
  cc?: string[];
  ccSuggested?: string[];
  source?: Ticket['source'];
  mailboxId?: string | null;
  followUpOf?: string | null;
  attachments?: AttachmentRef[];
}

/** What opening a ticket takes: a title and a client, the rest as the columns' defaults. */
export type NewTicketRow = TicketWrite & { title: string; clientId: string };

/** The columns of a TicketWrite (and the status timestamps), as the update sets them. */
function ticketColumnsOf(changes: TicketWrite & StatusTimestamps) {
  return {
    title: changes.title,
    description: changes.description,
    priority: changes.priority,
    category: changes.category,
    status: changes.status,
    client_id: changes.clientId,
    assignee_id: changes.assigneeId,
    merged_into_id: changes.mergedIntoId,
    merged_ids: changes.mergedIds,
    requester_id: changes.requesterId,
    cc: changes.cc,
    cc_suggested: changes.ccSuggested,
    source: changes.source,
    mailbox_id: changes.mailboxId,
    follow_up_of: changes.followUpOf,
    resolved_at: changes.resolvedAt,
    closed_at: changes.closedAt,
  };
}

/** `reads`: where the list's page and total are read (the read replica with DATABASE_READ_URL); the rest reads `db`. */
export function createTicketsRepository(db: Db, reads: Db = db) {
  async function rows<Row>(query: RawBuilder<Row>, on: Db = db): Promise<Row[]> {
    return (await query.execute(on)).rows;
  }

  async function findById(tenantId: string, id: string): Promise<Ticket | null> {
    const [row] = await rows(
      sql<TicketSqlRow>`SELECT ${TICKET_COLUMNS} FROM tickets ${SLA_JOIN} WHERE tickets.id = ${id}::uuid AND tickets.tenant_id = ${tenantId}::uuid`,
    );
    return row ? toTicket(row) : null;
  }

  /** The single statement of create (with its event) and createUnderPolicy (without: `event` null). */
  async function open(tenantId: string, ticket: NewTicketRow, event: EventHead | null): Promise<Ticket | null> {
    // Only what the caller gave; the columns' defaults (description '', normal, other, open) do the rest.
    const given = (
      [
        ['title', ticket.title === undefined ? undefined : sql`${ticket.title}`],
        ['description', ticket.description === undefined ? undefined : sql`${ticket.description}`],
        ['priority', ticket.priority === undefined ? undefined : sql`${ticket.priority}::ticket_priority`],
        ['category', ticket.category === undefined ? undefined : sql`${ticket.category}::ticket_category`],
        ['status', ticket.status === undefined ? undefined : sql`${ticket.status}::ticket_status`],
        ['client_id', sql`${ticket.clientId}::uuid`],
        ['assignee_id', ticket.assigneeId == null ? undefined : sql`${ticket.assigneeId}::uuid`],
        ['requester_id', ticket.requesterId == null ? undefined : sql`${ticket.requesterId}::uuid`],
        ['cc', ticket.cc?.length ? sql`${ticket.cc}::text[]` : undefined],
        ['cc_suggested', ticket.ccSuggested?.length ? sql`${ticket.ccSuggested}::text[]` : undefined],
        ['source', ticket.source === undefined ? undefined : sql`${ticket.source}`],
        ['mailbox_id', ticket.mailboxId == null ? undefined : sql`${ticket.mailboxId}::uuid`],
        ['follow_up_of', ticket.followUpOf == null ? undefined : sql`${ticket.followUpOf}::uuid`],
        ['attachments', ticket.attachments?.length ? sql`${JSON.stringify(ticket.attachments)}::jsonb` : undefined],
      ] as [string, RawBuilder<unknown> | undefined][]
    ).filter((entry): entry is [string, RawBuilder<unknown>] => entry[1] !== undefined);
    const assigneeHolds =
      ticket.assigneeId == null
        ? sql``
        : sql`AND EXISTS (SELECT 1 FROM users WHERE id = ${ticket.assigneeId}::uuid AND tenant_id = ${tenantId}::uuid AND active FOR SHARE)`;
    const recorded = event
      ? sql`,
      event AS (${eventInsertFrom('ticket', tenantId, event, TICKET_JSON)})`
      : sql``;
    const [row] = await rows(sql<TicketSqlRow>`
      WITH sequence AS (
        INSERT INTO ticket_sequences (tenant_id, last_number)
        SELECT ${tenantId}::uuid, 1
        WHERE EXISTS (SELECT 1 FROM clients WHERE id = ${ticket.clientId}::uuid AND tenant_id = ${tenantId}::uuid) ${assigneeHolds}
          ${event ? sql`AND ${noPolicyAppliesSql(tenantId, ticket.clientId)}` : sql``}
        ON CONFLICT (tenant_id) DO UPDATE SET last_number = ticket_sequences.last_number + 1
        RETURNING last_number
      ),
      ticket AS (
        INSERT INTO tickets (tenant_id, number, ${sql.raw(given.map(([column]) => column).join(', '))})
        SELECT ${tenantId}::uuid, sequence.last_number, ${sql.join(given.map(([, value]) => value))} FROM sequence
        RETURNING ${TICKET_RETURNING}
      )${recorded}
      SELECT * FROM ticket`);
    if (!row) return null;
    if (event) announceEventRecorded();
    return toTicket(row);
  }

  /**
   * A page of a search (`q`) and its total, in one plain statement on the replica: the
   * SEARCH_WINDOW + 1 newest tickets that match (`where`: the words and the other filters), found
   * from the GIN index on the words (a rare word) or by walking the tenant's newest tickets (a
   * frequent one), whichever the planner expects to be cheaper; how many they are is the total (one
   * more than the window: `totalExact` is false), the window's ones are ranked or sorted among
   * themselves, and only the page's tickets are read in full. Ranking every match by relevance, and
   * counting them all, would cost as much as the matches.
   */
  async function searchPage(
    tenantId: string,
    where: RawBuilder<boolean>,
    query: string,
    { sla, sortByDue }: { sla: boolean; sortByDue: boolean },
    page: PageRequest,
  ): Promise<{ items: Ticket[]; total: number; totalExact: boolean }> {
    const window = pageWindow(page);
    const join = sla || sortByDue ? SLA_JOIN : sql``;
    // What the window keeps of each match to order it by (the vector to rank, or the due time),
    // so the ranking reads no ticket again and runs on the window's rows alone.
    const kept = sortByDue ? sql`s.next_due_at AS match_due_at` : sql`tickets.search_vector AS match_vector`;
    const key = sortByDue ? sql`match_due_at` : sql`ts_rank_cd(match_vector, ${query}::tsquery)`;
    const order = (of: string) =>
      sql.raw(
        sortByDue
          ? `${of}key ASC NULLS LAST, ${of}match_created_at DESC, ${of}match_id DESC`
          : `${of}key DESC, ${of}match_created_at DESC, ${of}match_id DESC`,
      );
    // One row per ticket of the page, each with the total; a single row of nulls but the total when
    // the page is empty.
    const found = await rows(
      sql<Partial<TicketSqlRow> & { key: unknown; matched: number }>`
        WITH newest AS (
          SELECT tickets.id AS match_id, tickets.created_at AS match_created_at, ${kept} FROM tickets ${join} WHERE ${where}
          ORDER BY tickets.created_at DESC, tickets.id DESC LIMIT ${SEARCH_WINDOW + 1}
        ),
        ranked AS (
          SELECT match_id, match_created_at, ${key} AS key
          FROM (SELECT * FROM newest ORDER BY match_created_at DESC, match_id DESC LIMIT ${SEARCH_WINDOW}) searched
          ORDER BY ${order('')} LIMIT ${window.take} OFFSET ${window.skip}
        )
        SELECT total.matched, ${TICKET_COLUMNS}, ranked.key AS key
        FROM (SELECT count(*) AS matched FROM newest) total
        LEFT JOIN (ranked JOIN tickets ON tickets.id = ranked.match_id ${SLA_JOIN}) ON true
        ORDER BY ${order('ranked.')}`,
      reads,
    );
    const matched = Number(found[0]?.matched ?? 0);
    return {
      items: found.filter((row) => row.id != null).map((row) => toTicket(row as TicketSqlRow)),
      total: Math.min(matched, SEARCH_WINDOW),
      totalExact: matched <= SEARCH_WINDOW,
    };
  }

  return {
    findById,

    /** The id of the tenant's ticket of this number, if any. */
    async findIdByNumber(tenantId: string, number: number): Promise<string | null> {
      const row = await db
        .selectFrom('tickets')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('number', '=', number)
        .executeTakeFirst();
      return row?.id ?? null;
    },

    /**
     * The tsquery (as text) that finds the words: each word as its German or English stem or as
     * written, all of them (AND), the last also as a prefix of a word as written (`netw:*`). A word
     * that is a stop word in German or English is left out (it would match everything in one
     * language and nothing in the other); null when no word is left. The words hold only letters,
     * marks and digits (the service splits `q` so), which is all that goes into to_tsquery's syntax.
     *
     * How list() finds the matches, by the words before the last (without the prefix), counted
     * among the tenant's tickets in a statement of its own, planned for those words, stopping past
     * NARROW_MATCHES:
     * - `narrow`: they match at most NARROW_MATCHES: list() finds their rows through the index and
     *   checks the whole query on those alone.
     * - `walk`: they match more, and the tenant has at most WALK_TICKETS tickets (ticket_counts):
     *   list() reads the tenant's tickets newest first and checks the query on each. GIN answers
     *   the last word's prefix by collecting the rows of every lexeme that starts with it, in every
     *   tenant, before it intersects: a small tenant would pay for every other tenant's matches.
     * - neither (one word, or common words in a larger tenant): PostgreSQL plans the query for its
     *   words (plannedPerCall).
     */
    async searchQuery(
      tenantId: string,
      words: string[],
    ): Promise<{ query: string; narrow: string | null; walk: boolean } | null> {
      const [row] = await rows(sql<{ query: string | null; before_last: string | null }>`
        WITH words AS (
          SELECT w, i, i = max(i) OVER () AS last
          FROM unnest(${words}::text[]) WITH ORDINALITY AS t(w, i)
          WHERE numnode(plainto_tsquery('german', w)) > 0 AND numnode(plainto_tsquery('english', w)) > 0
        ),
        clauses AS (
          SELECT i, last, '(' || (plainto_tsquery('german', w) || plainto_tsquery('english', w)
            || CASE WHEN last THEN to_tsquery('simple', w || ':*') ELSE plainto_tsquery('simple', w) END)::text || ')' AS clause
          FROM words
        )
        SELECT string_agg(clause, ' & ' ORDER BY i) AS query, string_agg(clause, ' & ' ORDER BY i) FILTER (WHERE NOT last) AS before_last
        FROM clauses`);
      if (!row?.query) return null;
      if (row.before_last === null) return { query: row.query, narrow: null, walk: false };
      // Planned for these words: a frequent one walks the tenant's tickets until the count passes
      // NARROW_MATCHES, a rare one is looked up in the index, and neither collects a frequent word's
      // rows. The tenant's size (ticket_counts) rides along, for `walk`.
      const [probe] = await rows(sql<{ count: number; tickets: number | null }>`
        SELECT count(*) AS count,
          (SELECT count FROM ticket_counts WHERE tenant_id = ${tenantId}::uuid AND dimension = 'all' AND value = '') AS tickets
        FROM (SELECT 1 FROM tickets WHERE tenant_id = ${tenantId}::uuid
          AND ${plannedPerCall(sql<boolean>`search_vector @@ ${row.before_last}::tsquery`)} LIMIT ${NARROW_MATCHES + 1}) probe`);
      const rare = Number(probe?.count) <= NARROW_MATCHES;
      return {
        query: row.query,
        narrow: rare ? row.before_last : null,
        walk: !rare && Number(probe?.tickets ?? 0) <= WALK_TICKETS,
      };
    },

    /**
     * A page and the list's total (an `after` the tenant does not have is a 400).
     * ticket_counts (kept by triggers) answers the total of the unfiltered list and of every single
     * filter with one row; an SLA status alone is counted off the clocks' table (each row of it is a
     * ticket of the tenant it names: ticket_slas' foreign key and tenant_id), `running` and
     * `at_risk` from its due-time buckets (slaStatusTotalSql); other combinations count their
     * matching tickets. Newest first; the id breaks ties within a millisecond.
     */
    async list(
      tenantId: string,
      filters: TicketFilters & SlaListing & TicketSearch,
      page: PageRequest,
    ): Promise<{ items: Ticket[]; total: number; totalExact?: boolean }> {
      const active = (Object.entries(filters) as [keyof TicketFilters, string | undefined][]).filter(
        (entry): entry is [keyof TicketFilters, string] => entry[0] in FILTER_SQL && entry[1] !== undefined,
      );
      const sla = filters.sla_status
        ? slaStatusSql(tenantId, filters.sla_status, filters.at_risk_minutes ?? 60)
        : undefined;
      // ts_match_vq is the @@ operator as a function, which no index serves: with `walk`
      // (searchQuery), the tenant's tickets are read newest first and each is checked; with
      // `narrow`, the index finds the rarer words' rows and the whole query is checked on those alone.
      const search =
        filters.query === undefined
          ? []
          : filters.walk
            ? [sql<boolean>`ts_match_vq(tickets.search_vector, ${filters.query}::tsquery)`]
            : filters.narrow
              ? [
                  plannedPerCall(
                    sql<boolean>`search_vector @@ ${filters.narrow}::tsquery AND ts_match_vq(search_vector, ${filters.query}::tsquery)`,
                  ),
                ]
              : [plannedPerCall(sql<boolean>`search_vector @@ ${filters.query}::tsquery`)];
      const where = sql<boolean>`${sql.join(
        [
          sql`tickets.tenant_id = ${tenantId}::uuid`,
          ...active.map(([key, value]) => FILTER_SQL[key](value)),
          ...(sla ? [sla] : []),
          ...search,
        ],
        sql` AND `,
      )}`;
      if (filters.query !== undefined)
        return searchPage(
          tenantId,
          where,
          filters.query,
          { sla: sla !== undefined, sortByDue: filters.sort === 'sla_due_at' },
          page,
        );
      const [dimension, value] = active[0] ?? ['all', ''];
      const total =
        filters.sla_status && active.length === 0
          ? slaStatusTotalSql(tenantId, filters.sla_status, filters.at_risk_minutes ?? 60)
          : active.length > 1 || sla || (active[0] !== undefined && !COUNTED_FILTERS.has(active[0][0]))
            ? sql<{ count: number }>`SELECT count(*) AS count FROM tickets ${sla ? SLA_JOIN : sql``} WHERE ${where}`
            : sql<{
                count: number;
              }>`SELECT count FROM ticket_counts WHERE tenant_id = ${tenantId}::uuid AND dimension = ${dimension} AND value = ${value}`;
      const order =
        filters.sort === 'sla_due_at'
          ? slaNextDueOrder(filters.sla_status === 'running' || filters.sla_status === 'at_risk')
          : sql`tickets.created_at DESC, tickets.id DESC`;
      const window = listWindow(page);
      // Keyset paging (`after`, default order only: the service refuses it with q or sort): the
      // tickets after that one, where the (tenant_id, [filter,] created_at, id) index continues.
      let afterKey: unknown[] | undefined;
      if (window.after !== undefined) {
        afterKey = await afterKeyOf(
          reads.selectFrom('tickets').where('tenant_id', '=', tenantId),
          KEYSET_ORDER,
          window.after,
        );
        if (!afterKey) throw unknownAfterItem();
      }
      const after = afterKey ? sql` AND (tickets.created_at, tickets.id) < (${afterKey[0]}, ${afterKey[1]})` : sql``;
      // The total rides on every row of the page, so page and total are one statement and one round
      // trip: PostgreSQL runs the uncorrelated subquery once. Only an empty page (past the end, or
      // nothing matches) has no row to carry it, and asks for the total alone.
      const found = await rows(
        sql<TicketSqlRow & { list_total: number }>`SELECT ${TICKET_COLUMNS}, (${total}) AS list_total
          FROM tickets ${SLA_JOIN} WHERE ${where}${after} ORDER BY ${order} LIMIT ${window.take} OFFSET ${window.skip}`,
        reads,
      );
      const counted = found[0] ? found[0].list_total : (await rows(total, reads))[0]?.count;
      return { items: found.map(toTicket), total: Number(counted ?? 0) };
    },

    /** Reads the ticket and locks it until the transaction ends, so changes to one ticket queue. */
    async findForUpdate(tenantId: string, id: string): Promise<Ticket | null> {
      const locked = await db
        .selectFrom('tickets')
        .select('id')
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .forUpdate()
        .executeTakeFirst();
      return locked ? findById(tenantId, id) : null;
    },

    /**
     * Opens a ticket that no SLA policy applies to, in one statement, atomic without a transaction
     * around it: checks its references (the client is the tenant's; the assignee an active user of
     * it, share-locked so a deactivation cannot slip in between) and that no policy applies, draws
     * the tenant's next number, inserts the ticket and records the service's `event` (its head:
     * which event, whose) with the ticket as answered as its `object`. Answers null, having written
     * nothing, when a reference does not hold or a policy applies. The number's row stays locked
     * until the commit, so every create of a tenant waits for the one before it: one statement,
     * with no round trip to this process while the lock is held, is what makes POST /tickets fast
     * (docs/performance.md).
     */
    create(tenantId: string, ticket: NewTicketRow, event: EventHead): Promise<Ticket | null> {
      return open(tenantId, ticket, event);
    },

    /**
     * Opens a ticket that an SLA policy applies to, the same way but recording nothing: the
     * service, in its transaction, starts the ticket's clocks and then records the event itself.
     */
    createUnderPolicy(tenantId: string, ticket: NewTicketRow): Promise<Ticket | null> {
      return open(tenantId, ticket, null);
    },

    /** Reads the tickets of these ids that the tenant has and locks them, in id order (two such locks cannot deadlock). */
    async findManyForUpdate(tenantId: string, ids: string[]): Promise<Map<string, Ticket>> {
      const locked = await rows(
        sql<TicketSqlRow>`SELECT ${TICKET_COLUMNS} FROM tickets ${SLA_JOIN} WHERE tickets.id = ANY(${ids}::uuid[])
          AND tickets.tenant_id = ${tenantId}::uuid ORDER BY tickets.id FOR UPDATE OF tickets`,
      );
      return new Map(locked.map((row) => [row.id, toTicket(row)]));
    },

    /**
     * Moves the merged tickets' comments and time entries to the target, in one statement each (the
     * search vectors of the tickets they leave and reach are rebuilt once per statement): the
     * comments keep author and time and remember where they were written (merged_from_ticket_id,
     * the first ticket if merged twice); the time entries take the target's client, as they follow
     * their ticket's client.
     */
    async moveActivity(tenantId: string, sourceIds: string[], target: Pick<Ticket, 'id' | 'client_id'>): Promise<void> {
      await sql`UPDATE ticket_comments SET ticket_id = ${target.id}::uuid, merged_from_ticket_id = coalesce(merged_from_ticket_id, ticket_id)
        WHERE ticket_id = ANY(${sourceIds}::uuid[]) AND tenant_id = ${tenantId}::uuid`.execute(db);
      await sql`UPDATE time_entries SET ticket_id = ${target.id}::uuid, client_id = ${target.client_id}::uuid
        WHERE ticket_id = ANY(${sourceIds}::uuid[]) AND tenant_id = ${tenantId}::uuid`.execute(db);
    },

    /** `at` becomes updated_at, the same instant the status timestamps were taken from. */
    async update(tenantId: string, id: string, changes: TicketWrite & StatusTimestamps, at: Date): Promise<Ticket> {
      await db
        .updateTable('tickets')
        .set({ ...ticketColumnsOf(changes), updated_at: at })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow();
      return (await findById(tenantId, id))!;
    },

    /**
     * Unassigns the user's tickets that are still being worked on; resolved and closed ones keep
     * their history. Answers the tickets it unassigned, as they are now.
     */
    async unassignOpen(tenantId: string, assigneeId: string): Promise<Ticket[]> {
      const updated = await rows(sql<TicketSqlRow>`
        UPDATE tickets SET assignee_id = NULL, updated_at = ${new Date()}
        WHERE tenant_id = ${tenantId}::uuid AND assignee_id = ${assigneeId}::uuid AND status = ANY(${[...WORKING_STATUSES]}::ticket_status[])
        RETURNING ${TICKET_RETURNING}`);
      return updated.map(toTicket);
    },
  };
}

export type TicketsRepository = ReturnType<typeof createTicketsRepository>;
