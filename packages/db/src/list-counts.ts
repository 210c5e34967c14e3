import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SqlQuery } from './sql-reads';

/*
 * The exact totals of the services' lists, read from `list_counts` (packages/db/sql/list-counts.sql:
 * the table and the triggers that keep it in the writing transaction; list-counts-grouped.sql: the
 * triggers' functions as they are now). A list counts its rows by
 * `count(*)` only for what no counter answers (several filters at once); the whole list, one
 * filter's value and one date dimension's range are index probes of `list_counts`, whatever the
 * tenant's size.
 */

/** The canonical SQL of `list_counts`, which a service's migration holds word for word. */
export const LIST_COUNTS_SQL_PATH = path.join(__dirname, '..', 'sql', 'list-counts.sql');
export function listCountsSql(): string {
  return readFileSync(LIST_COUNTS_SQL_PATH, 'utf8');
}

/**
 * The trigger functions of `list_counts` as they are now (one grouped aggregate per statement),
 * replacing those of list-counts.sql: every service's migrations hold this text word for word too,
 * in a later migration (`<timestamp>_list_counts_grouped`).
 */
export const LIST_COUNTS_GROUPED_SQL_PATH = path.join(__dirname, '..', 'sql', 'list-counts-grouped.sql');
export function listCountsGroupedSql(): string {
  return readFileSync(LIST_COUNTS_GROUPED_SQL_PATH, 'utf8');
}

/** One filter a counter answers: a dimension (a column the triggers count by) and its value as text. */
export interface CountedFilter {
  dimension: string;
  value: string;
}

/** The total of `list` for the tenant: the whole list, or the rows whose `filter.dimension` is `filter.value`. */
export function listCountSql(tenantId: string, list: string, filter?: CountedFilter): SqlQuery {
  return {
    text: `SELECT coalesce((SELECT count FROM list_counts WHERE tenant_id = $1::uuid AND list = $2 AND dimension = $3 AND value = $4), 0) AS count`,
    values: [tenantId, list, filter?.dimension ?? 'all', filter?.dimension ? filter.value : ''],
  };
}

/**
 * The total of `list` for the tenant with a date dimension between `from` and `to` (YYYY-MM-DD,
 * both inclusive, either open): the sum of that dimension's counters, one per day with rows.
 */
export function listCountRangeSql(
  tenantId: string,
  list: string,
  dimension: string,
  range: { from?: string; to?: string },
): SqlQuery {
  return {
    text: `SELECT coalesce(sum(count), 0) AS count FROM list_counts
            WHERE tenant_id = $1::uuid AND list = $2 AND dimension = $3 AND value >= $4 AND value <= $5`,
    // Every YYYY-MM-DD sorts between these two as text.
    values: [tenantId, list, dimension, range.from ?? '0000-00-00', range.to ?? '9999-99-99'],
  };
}
