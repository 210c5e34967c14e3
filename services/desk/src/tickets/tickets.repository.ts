import { isoOf, isoTimestampSql, sqlRows, type KeysetOrder, type Queryable } from '@msp/db';
import { announceEventRecorded, EVENT_HEAD_COLUMNS, eventHeadValues, type EventHead } from '@msp/events';
import type { PageRequest } from '@msp/http';
import { pageWindow } from '@msp/http';
import type { DbTx } from '../db';
import { lists } from '../shared/lists';
import { noPolicyAppliesSql } from '../sla-policies/sla-policies.repository';
import { SLA_JSON_SQL, TICKET_SLA_COLUMN, TICKET_SLA_JOIN, slaNextDueOrder, slaStatusSql, slaStatusTotalSql } from '../sla/ticket-slas.repository';
import type { AttachmentRef } from '../attachments/attachment.schemas';
import type { SlaListing, TicketSla } from '../sla/sla.schemas';
import { Prisma, type Ticket as TicketRow } from '../generated/prisma/client';
import { SEARCH_WINDOW, type Ticket, type TicketFilters, type TicketSearch } from './ticket.schemas';
import { WORKING_STATUSES, type StatusTimestamps, type TicketStatus } from './ticket-status';

/** A ticket without its `sla` (a Prisma model row has none: the SLA clocks live in ticket_slas). */
export type TicketCore = Omit<Ticket, 'sla'>;

type TicketRecord = TicketRow & { requester: { id: string; name: string; email: string } | null };
/** What a model read of a ticket includes: its requester as the API shows it. */
const WITH_REQUESTER = { requester: { select: { id: true, name: true, email: true } } } as const;

/** The stored ticket in the API's shape: the one place rows become responses. */
function toTicket(row: TicketRecord): TicketCore {
  return {
    id: row.id,
    number: row.number,
    title: row.title,
    description: row.description,
    priority: row.priority,
    category: row.category,
    status: row.status,
    client_id: row.clientId,
    assignee_id: row.assigneeId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    resolved_at: row.resolvedAt?.toISOString() ?? null,
    closed_at: row.closedAt?.toISOString() ?? null,
    merged_into_id: row.mergedIntoId,
    merged_ids: row.mergedIds ?? [],
    requester: row.requester,
    cc: row.cc ?? [],
    cc_suggested: row.ccSuggested ?? [],
    source: row.source as Ticket['source'],
    mailbox_id: row.mailboxId,
    follow_up_of: row.followUpOf,
    attachments: (row.attachments ?? []) as unknown as AttachmentRef[],
  };
}

/*
 * The two hottest reads, one ticket and a page of the list, and creating a ticket are plain SQL
 * (sqlRows of @msp/db: on the pg pool, else, inside a Prisma transaction, through it).
 * Prisma's model queries and result mapping were the largest cost of a read request
 * (bench/README.md, issue 12), and the list needed two queries. Other writes keep the model API.
 */

/** The requester as the API shows it, `{id, name, email}`, or null. */
const REQUESTER_SQL = `(SELECT jsonb_build_object('id', r.id, 'name', r.name, 'email', r.email::text) FROM contacts r WHERE r.id = tickets.requester_id)`;

/**
 * The ticket's columns as the API names them; enums as text; each timestamp as `timestamp` writes
 * it; its `sla` as `sla` gives it: from the clocks joined as `s` (TICKET_SLA_JOIN), or a subselect.
 */
const ticketColumns = (timestamp: (column: string) => string, sla: string) =>
  Prisma.raw(`tickets.id, number, title, description, priority::text AS priority, category::text AS category,
  status::text AS status, client_id, assignee_id, ${['created_at', 'updated_at', 'resolved_at', 'closed_at'].map(timestamp).join(', ')},
  merged_into_id, coalesce(merged_ids, '{}') AS merged_ids, ${REQUESTER_SQL} AS requester, coalesce(cc, '{}') AS cc,
  coalesce(cc_suggested, '{}') AS cc_suggested, source, mailbox_id, follow_up_of, attachments, ${sla}`);

/** Read as `FROM tickets ${TICKET_SLA_JOIN}`. */
const TICKET_COLUMNS = ticketColumns((column) => column, `${SLA_JSON_SQL} AS sla`);
const SLA_JOIN = Prisma.raw(TICKET_SLA_JOIN);
/** searchPage: how many of the tenant's newest tickets it looks at first (the search's density among them decides the way). */
const SEARCH_PEEK = 100;
/** searchPage: the most of the tenant's newest tickets a walk reads before it leaves the search to the GIN index. */
const SEARCH_WALK = 50_000;
/** searchQuery's `narrow`: the most tickets the words before the last may match for list() to search through them. */
const NARROW_MATCHES = 500;
/** The list's default order, which `after` pages (lists.keysetAfter): newest first, the id breaking ties. */
const KEYSET_ORDER: Omit<KeysetOrder<Prisma.Sql>, 'scope'> = { table: 'tickets', alias: 'tickets', columns: ['created_at', 'id'], direction: 'desc' };
/**
 * One ticket by id ($1) of a tenant ($2), the API's cheapest read: its text is built once, not per
 * request (a Prisma.sql template joins its parts on every read of `.text`, and the prepared
 * statement's name is looked up by that text: a 2 KB string hashed anew each time; bench:profile).
 */
const FIND_BY_ID = Prisma.sql`SELECT ${TICKET_COLUMNS} FROM tickets ${SLA_JOIN} WHERE tickets.id = ${''}::uuid AND tickets.tenant_id = ${''}::uuid`.text;
/**
 * A new ticket's RETURNING (no join there; it has no clocks yet, the subselect says so), with the
 * timestamps as the API's text, made by PostgreSQL: `to_jsonb` of such a row is the ticket as the API answers it.
 */
const TICKET_API_COLUMNS = ticketColumns((column) => `${isoTimestampSql(column)} AS ${column}`, TICKET_SLA_COLUMN);

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
  created_at: string | Date;
  updated_at: string | Date;
  resolved_at: string | Date | null;
  closed_at: string | Date | null;
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

function fromSql(row: TicketSqlRow): Ticket {
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
    created_at: isoOf(row.created_at),
    updated_at: isoOf(row.updated_at),
    resolved_at: isoOf(row.resolved_at),
    closed_at: isoOf(row.closed_at),
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
const FILTER_SQL: Record<keyof TicketFilters, (value: string) => Prisma.Sql> = {
  status: (value) => Prisma.sql`status = ${value}::ticket_status`,
  priority: (value) => Prisma.sql`priority = ${value}::ticket_priority`,
  category: (value) => Prisma.sql`category = ${value}::ticket_category`,
  client_id: (value) => Prisma.sql`client_id = ${value}::uuid`,
  assignee_id: (value) => Prisma.sql`assignee_id = ${value}::uuid`,
  requester_id: (value) => Prisma.sql`requester_id = ${value}::uuid`,
  source: (value) => Prisma.sql`source = ${value}`,
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

/** `reads`: where the list's page and total are read when given (the read replica's pool, DATABASE_READ_URL); the rest reads the primary. */
export function createTicketsRepository(db: DbTx, connection?: Queryable, reads?: Queryable) {
  const rows = sqlRows(db, connection);
  const listRows = reads ? sqlRows(db, reads) : rows;

  async function findById(tenantId: string, id: string): Promise<Ticket | null> {
    const [row] = await rows<TicketSqlRow>({ text: FIND_BY_ID, values: [id, tenantId] });
    return row ? fromSql(row) : null;
  }

  /** The single statement of create (with its event) and createUnderPolicy (without: `event` null). */
  async function open(tenantId: string, ticket: NewTicketRow, event: EventHead | null): Promise<Ticket | null> {
    // Only what the caller gave; the columns' defaults (description '', normal, other, open) do the rest.
    const given: [string, Prisma.Sql][] = (
      [
        ['title', ticket.title === undefined ? undefined : Prisma.sql`${ticket.title}`],
        ['description', ticket.description === undefined ? undefined : Prisma.sql`${ticket.description}`],
        ['priority', ticket.priority === undefined ? undefined : Prisma.sql`${ticket.priority}::ticket_priority`],
        ['category', ticket.category === undefined ? undefined : Prisma.sql`${ticket.category}::ticket_category`],
        ['status', ticket.status === undefined ? undefined : Prisma.sql`${ticket.status}::ticket_status`],
        ['client_id', Prisma.sql`${ticket.clientId}::uuid`],
        ['assignee_id', ticket.assigneeId == null ? undefined : Prisma.sql`${ticket.assigneeId}::uuid`],
        ['requester_id', ticket.requesterId == null ? undefined : Prisma.sql`${ticket.requesterId}::uuid`],
        ['cc', ticket.cc?.length ? Prisma.sql`${ticket.cc}::text[]` : undefined],
        ['cc_suggested', ticket.ccSuggested?.length ? Prisma.sql`${ticket.ccSuggested}::text[]` : undefined],
        ['source', ticket.source === undefined ? undefined : Prisma.sql`${ticket.source}`],
        ['mailbox_id', ticket.mailboxId == null ? undefined : Prisma.sql`${ticket.mailboxId}::uuid`],
        ['follow_up_of', ticket.followUpOf == null ? undefined : Prisma.sql`${ticket.followUpOf}::uuid`],
        ['attachments', ticket.attachments?.length ? Prisma.sql`${JSON.stringify(ticket.attachments)}::jsonb` : undefined],
      ] as [string, Prisma.Sql | undefined][]
    ).filter((entry): entry is [string, Prisma.Sql] => entry[1] !== undefined);
    const assigneeHolds =
      ticket.assigneeId == null
        ? Prisma.empty
        : Prisma.sql`AND EXISTS (SELECT 1 FROM users WHERE id = ${ticket.assigneeId}::uuid AND tenant_id = ${tenantId}::uuid AND active FOR SHARE)`;
    const recorded = event
      ? Prisma.sql`,
      event AS (
        INSERT INTO events (${Prisma.raw(EVENT_HEAD_COLUMNS)}, tenant_id, resource_id, data)
        SELECT ${Prisma.join(eventHeadValues(event))}, ${tenantId}::uuid, ticket.id::text, jsonb_build_object('object', to_jsonb(ticket)) FROM ticket
      )`
      : Prisma.empty;
    const [row] = await rows<TicketSqlRow>(Prisma.sql`
      WITH sequence AS (
        INSERT INTO ticket_sequences (tenant_id, last_number)
        SELECT ${tenantId}::uuid, 1
        WHERE EXISTS (SELECT 1 FROM clients WHERE id = ${ticket.clientId}::uuid AND tenant_id = ${tenantId}::uuid) ${assigneeHolds}
          ${event ? Prisma.sql`AND ${noPolicyAppliesSql(tenantId, ticket.clientId)}` : Prisma.empty}
        ON CONFLICT (tenant_id) DO UPDATE SET last_number = ticket_sequences.last_number + 1
        RETURNING last_number
      ),
      ticket AS (
        INSERT INTO tickets (tenant_id, number, ${Prisma.raw(given.map(([column]) => column).join(', '))})
        SELECT ${tenantId}::uuid, sequence.last_number, ${Prisma.join(given.map(([, value]) => value))} FROM sequence
        RETURNING ${TICKET_API_COLUMNS}
      )${recorded}
      SELECT * FROM ticket`);
    if (!row) return null;
    if (event) announceEventRecorded();
    return fromSql(row);
  }

  /**
   * A page of a search (`q`) and its total, in one statement: the SEARCH_WINDOW newest tickets that
   * match (`where`: the words and the other filters), ranked or sorted among themselves, and how many
   * match up to one more than the window (so `totalExact` knows whether more do).
   *
   * Why a window: ranking every match by relevance, and counting them all, cost as much as the
   * matches (212,763 tickets of a million for `Drucker`: ~1 s a request, a pool connection held all
   * along). The window's tickets are found one of two ways, and both find the same ones:
   * - `walked`: the (tenant_id, created_at, id) index is read from the newest, each ticket checked,
   *   until the window is full (at most SEARCH_WALK tickets). With d the share of the tenant's
   *   SEARCH_PEEK newest tickets that match, a walk reads about window/d tickets, the GIN index
   *   about d × N matches (N the tenant's tickets, ticket_counts): the walk is taken when it is the
   *   shorter, d² × N ≥ window. So a common word costs the same at any size.
   * - otherwise (a rare word, or the walk did not fill the window), the GIN index finds every match,
   *   and the newest are taken: as costly as the matches, which are few. Its ORDER BY hides the
   *   created_at index from the planner, which would otherwise walk it for a word it cannot
   *   estimate (a prefix of a word nobody wrote walked a million tickets).
   * The PEEK and WALK subqueries end in LIMIT, so the planner keeps them as they are: an index scan
   * in the list's order that stops there.
   */
  async function searchPage(
    tenantId: string,
    where: Prisma.Sql,
    query: string,
    { sla, sortByDue }: { sla: boolean; sortByDue: boolean },
    page: PageRequest,
  ): Promise<{ items: Ticket[]; total: number; totalExact: boolean }> {
    const window = pageWindow(page);
    const join = sla || sortByDue ? SLA_JOIN : Prisma.empty;
    // What the window's tickets are ordered by: computed as each is found (a walk) or read back by
    // id (the GIN index), so a ticket's search_vector is read where it is, once; carried through
    // the materialized window instead, it was copied out of TOAST for every row (4× the time).
    const key = sortByDue ? Prisma.raw('s.next_due_at') : Prisma.sql`ts_rank_cd(tickets.search_vector, ${query}::tsquery)`;
    const newest = (limit: number) =>
      Prisma.sql`(SELECT * FROM tickets t0 WHERE t0.tenant_id = ${tenantId}::uuid ORDER BY t0.created_at DESC, t0.id DESC LIMIT ${limit}) AS tickets`;
    const order = Prisma.raw(sortByDue ? 'key ASC NULLS LAST, created_at DESC, id DESC' : 'key DESC, created_at DESC, id DESC');
    const found = await listRows<TicketSqlRow & { total: string | bigint; position: string | bigint | null }>(Prisma.sql`
      WITH peek AS MATERIALIZED (
        SELECT count(*) AS matched FROM ${newest(SEARCH_PEEK)} ${join} WHERE ${where}
      ),
      walked AS MATERIALIZED (
        SELECT tickets.id, tickets.created_at, ${key} AS key FROM ${newest(SEARCH_WALK)} ${join}
        WHERE ${where} AND (SELECT matched FROM peek) ^ 2 * (SELECT coalesce(max(count), 0) FROM ticket_counts
          WHERE tenant_id = ${tenantId}::uuid AND dimension = 'all' AND value = '') >= ${(SEARCH_WINDOW + 1) * SEARCH_PEEK * SEARCH_PEEK}
        ORDER BY tickets.created_at DESC, tickets.id DESC LIMIT ${SEARCH_WINDOW + 1}
      ),
      matches AS MATERIALIZED (
        SELECT * FROM walked WHERE (SELECT count(*) FROM walked) > ${SEARCH_WINDOW}
        UNION ALL
        SELECT found.id, found.created_at, ${key} FROM (
          SELECT tickets.id, tickets.created_at FROM tickets ${join}
          WHERE ${where} AND (SELECT count(*) FROM walked) <= ${SEARCH_WINDOW}
          ORDER BY tickets.created_at + interval '0 seconds' DESC, tickets.id DESC LIMIT ${SEARCH_WINDOW + 1}
        ) found JOIN tickets ON tickets.id = found.id ${sortByDue ? SLA_JOIN : Prisma.empty}
      ),
      picked AS (
        SELECT id, row_number() OVER (ORDER BY ${order}) AS position
        FROM (SELECT * FROM matches ORDER BY created_at DESC, id DESC LIMIT ${SEARCH_WINDOW}) w
        ORDER BY ${order} LIMIT ${window.take} OFFSET ${window.skip}
      )
      SELECT (SELECT count(*) FROM matches) AS total, page.*
      FROM (SELECT 1) one LEFT JOIN LATERAL (
        SELECT ${TICKET_COLUMNS}, picked.position FROM picked JOIN tickets ON tickets.id = picked.id ${SLA_JOIN}
      ) page ON true
      ORDER BY page.position`);
    const matched = Number(found[0]?.total ?? 0);
    const items = found.filter((row) => row.position !== null).map((row) => fromSql(row));
    return { items, total: Math.min(matched, SEARCH_WINDOW), totalExact: matched <= SEARCH_WINDOW };
  }

  return {
    findById,

    /** The id of the tenant's ticket of this number, if any. */
    async findIdByNumber(tenantId: string, number: number): Promise<string | null> {
      const [row] = await rows<{ id: string }>(Prisma.sql`SELECT id FROM tickets WHERE tenant_id = ${tenantId}::uuid AND number = ${number}`);
      return row?.id ?? null;
    },

    /**
     * The tsquery (as text) that finds the words: each word as its German or English stem or as
     * written, all of them (AND), the last also as a prefix of a word as written (`netw:*`). A word
     * that is a stop word in German or English is left out (it would match everything in one
     * language and nothing in the other); null when no word is left. The words hold only letters,
     * marks and digits (the service splits `q` so), which is all that goes into to_tsquery's syntax.
     *
     * `narrow`: the words before the last, without the prefix, when they match at most
     * NARROW_MATCHES of the tenant's tickets (counted off the index, stopping there). GIN answers a
     * prefix by collecting every row of every lexeme that starts with it, in every tenant, before it
     * intersects; when the other words are that rare, list() finds their rows through the index and
     * checks the whole query on those alone (a ticket's number and a word: 172 → ~1 ms at 1M tickets).
     */
    async searchQuery(tenantId: string, words: string[]): Promise<{ query: string; narrow: string | null } | null> {
      const [row] = await rows<{ query: string | null; narrow: string | null }>(Prisma.sql`
        WITH words AS (
          SELECT w, i, i = max(i) OVER () AS last
          FROM unnest(${words}::text[]) WITH ORDINALITY AS t(w, i)
          WHERE numnode(plainto_tsquery('german', w)) > 0 AND numnode(plainto_tsquery('english', w)) > 0
        ),
        clauses AS (
          SELECT i, last, '(' || (plainto_tsquery('german', w) || plainto_tsquery('english', w)
            || CASE WHEN last THEN to_tsquery('simple', w || ':*') ELSE plainto_tsquery('simple', w) END)::text || ')' AS clause
          FROM words
        ),
        search AS (
          SELECT string_agg(clause, ' & ' ORDER BY i) AS query, string_agg(clause, ' & ' ORDER BY i) FILTER (WHERE NOT last) AS before_last
          FROM clauses
        )
        SELECT query,
          CASE WHEN before_last IS NOT NULL AND (SELECT count(*) FROM (SELECT 1 FROM tickets
              WHERE tenant_id = ${tenantId}::uuid AND search_vector @@ before_last::tsquery LIMIT ${NARROW_MATCHES + 1}) probe) <= ${NARROW_MATCHES}
            THEN before_last END AS narrow
        FROM search`);
      return row?.query ? { query: row.query, narrow: row.narrow } : null;
    },

    /**
     * A page and the list's total, in one round trip unless the page is empty (lists.keysetPage:
     * an empty page after an `after` the tenant does not have is a 400).
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
      const sla = filters.sla_status ? slaStatusSql(tenantId, filters.sla_status, filters.at_risk_minutes ?? 60) : undefined;
      // With `narrow` (searchQuery), the index finds the rarer words' rows and ts_match_vq (the @@
      // operator as a function, which no index serves) checks the whole query on those alone.
      const search =
        filters.query === undefined
          ? []
          : filters.narrow
            ? [Prisma.sql`search_vector @@ ${filters.narrow}::tsquery AND ts_match_vq(search_vector, ${filters.query}::tsquery)`]
            : [Prisma.sql`search_vector @@ ${filters.query}::tsquery`];
      const where = Prisma.join(
        [Prisma.sql`tickets.tenant_id = ${tenantId}::uuid`, ...active.map(([key, value]) => FILTER_SQL[key](value)), ...(sla ? [sla] : []), ...search],
        ' AND ',
      );
      if (filters.query !== undefined) return searchPage(tenantId, where, filters.query, { sla: sla !== undefined, sortByDue: filters.sort === 'sla_due_at' }, page);
      const [dimension, value] = active[0] ?? ['all', ''];
      const total =
        filters.sla_status && active.length === 0
          ? slaStatusTotalSql(tenantId, filters.sla_status, filters.at_risk_minutes ?? 60)
          : active.length > 1 || sla || (active[0] !== undefined && !COUNTED_FILTERS.has(active[0][0]))
            ? Prisma.sql`SELECT count(*) FROM tickets ${sla ? SLA_JOIN : Prisma.empty} WHERE ${where}`
            : Prisma.sql`SELECT count FROM ticket_counts WHERE tenant_id = ${tenantId}::uuid AND dimension = ${dimension} AND value = ${value}`;
      const order =
        filters.sort === 'sla_due_at'
          ? slaNextDueOrder(filters.sla_status === 'running' || filters.sla_status === 'at_risk')
          : Prisma.sql`created_at DESC, tickets.id DESC`;
      const window = pageWindow(page);
      // Keyset paging (`after`, default order only: the service refuses it with q or sort): the
      // tickets after that one, where the (tenant_id, [filter,] created_at, id) index continues; an
      // `after` the tenant does not have is a 400 (keysetPage).
      const keysetOrder = { ...KEYSET_ORDER, scope: Prisma.sql`k.tenant_id = ${tenantId}::uuid` };
      const found = await lists.keysetPage<TicketSqlRow>(listRows, page, {
        page: Prisma.sql`SELECT ${TICKET_COLUMNS} FROM tickets ${SLA_JOIN} WHERE ${where}${lists.keysetAfter(page, keysetOrder)} ORDER BY ${order} LIMIT ${window.take} OFFSET ${window.skip}`,
        total,
        exists: lists.afterExists(page, keysetOrder),
      });
      return { items: found.items.map(fromSql), total: found.total };
    },

    /** Reads the ticket and locks it until the transaction ends, so changes to one ticket queue. */
    async findForUpdate(tenantId: string, id: string): Promise<Ticket | null> {
      const locked = await db.$queryRaw<{ id: string }[]>`SELECT id FROM tickets WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
      return locked.length ? findById(tenantId, id) : null;
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
     * (bench/README.md).
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
      const locked = await rows<TicketSqlRow>(
        Prisma.sql`SELECT ${TICKET_COLUMNS} FROM tickets ${SLA_JOIN} WHERE tickets.id = ANY(${ids}::uuid[]) AND tickets.tenant_id = ${tenantId}::uuid ORDER BY tickets.id FOR UPDATE OF tickets`,
      );
      return new Map(locked.map((row) => [row.id, fromSql(row)]));
    },

    /**
     * Moves the merged tickets' comments and time entries to the target, in one statement each (the
     * search vectors of the tickets they leave and reach are rebuilt once per statement): the
     * comments keep author and time and remember where they were written (merged_from_ticket_id,
     * the first ticket if merged twice); the time entries take the target's client, as they follow
     * their ticket's client.
     */
    async moveActivity(tenantId: string, sourceIds: string[], target: Pick<Ticket, 'id' | 'client_id'>): Promise<void> {
      await db.$executeRaw`UPDATE ticket_comments SET ticket_id = ${target.id}::uuid, merged_from_ticket_id = coalesce(merged_from_ticket_id, ticket_id)
        WHERE ticket_id = ANY(${sourceIds}::uuid[]) AND tenant_id = ${tenantId}::uuid`;
      await db.$executeRaw`UPDATE time_entries SET ticket_id = ${target.id}::uuid, client_id = ${target.client_id}::uuid
        WHERE ticket_id = ANY(${sourceIds}::uuid[]) AND tenant_id = ${tenantId}::uuid`;
    },

    /** `at` becomes updated_at, the same instant the status timestamps were taken from. */
    async update(tenantId: string, id: string, changes: TicketWrite & StatusTimestamps, at: Date): Promise<TicketCore> {
      const row = await db.ticket.update({ where: { id, tenantId }, data: { ...changes, updatedAt: at }, include: WITH_REQUESTER });
      return toTicket(row);
    },

    /**
     * Unassigns the user's tickets that are still being worked on; resolved and closed ones keep
     * their history. Answers the tickets it unassigned, as they are now.
     */
    async unassignOpen(tenantId: string, assigneeId: string): Promise<Ticket[]> {
      const updated = await db.ticket.updateManyAndReturn({
        where: { tenantId, assigneeId, status: { in: [...WORKING_STATUSES] } },
        data: { assigneeId: null },
      });
      if (!updated.length) return [];
      const slas = await rows<{ id: string; sla: TicketSla | null; requester: TicketRecord['requester'] }>(
        Prisma.sql`SELECT id, ${Prisma.raw(TICKET_SLA_COLUMN)}, ${Prisma.raw(REQUESTER_SQL)} AS requester FROM tickets WHERE id = ANY(${updated.map((row) => row.id)}::uuid[])`,
      );
      return updated.map((row) => {
        const read = slas.find((sla) => sla.id === row.id);
        return { ...toTicket({ ...row, requester: read?.requester ?? null }), sla: read?.sla ?? null };
      });
    },
  };
}

export type TicketsRepository = ReturnType<typeof createTicketsRepository>;
