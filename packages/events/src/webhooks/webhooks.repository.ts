import { keysetPage, listCountSql, sqlRows } from '@msp/db';
import { unknownAfterItem, type PageRequest } from '@msp/http';
import { eventBodySql } from '../delivery/deliveries.repository';
import type { Sql } from '../sql';
import type { DeliveryJson, DeliveryStatus, WebhookJson } from './webhook.schemas';

interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_type: string;
  event_id: string | null;
  status: DeliveryStatus;
  attempt: number;
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
  next_attempt_at: Date | null;
  attempts: DeliveryJson['attempts'];
  created_at: Date;
}

const iso = (value: Date | string) => new Date(value).toISOString();

/** The one place rows become responses. */
const toWebhook = (row: WebhookRow): WebhookJson => ({
  id: row.id,
  url: row.url,
  events: row.events,
  description: row.description,
  enabled: row.enabled,
  disabled_reason: row.disabled_reason,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
});

const toDelivery = (row: DeliveryRow): DeliveryJson => ({
  id: row.id,
  webhook_id: row.webhook_id,
  event: row.event_type,
  event_id: row.event_id,
  status: row.status,
  attempt: row.attempt,
  response_status: row.response_status,
  duration_ms: row.duration_ms,
  error: row.error,
  next_attempt_at: row.next_attempt_at && iso(row.next_attempt_at),
  attempts: row.attempts,
  created_at: iso(row.created_at),
});

/** The lists' names in list_counts (the triggers of migration *_events_lists_retention). */
export const WEBHOOKS_LIST = 'webhooks';
export const DELIVERIES_LIST = 'webhook-deliveries';

const WEBHOOK_COLUMNS = 'id::text, url, events, description, enabled, disabled_reason, created_at, updated_at';
const DELIVERY_COLUMNS =
  'id::text, webhook_id::text, event_type, event_id::text, status, attempt, response_status, duration_ms, error, next_attempt_at, attempts, created_at';

/** Every query is bounded by the caller's tenant: another tenant's webhooks are simply not found. */
export function createWebhooksRepository(db: Sql) {
  const rows = sqlRows(db);
  async function find(tenantId: string, id: string): Promise<WebhookJson | null> {
    const rows = await db.$queryRawUnsafe<WebhookRow[]>(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1::uuid AND tenant_id = $2::uuid`,
      id,
      tenantId,
    );
    return rows[0] ? toWebhook(rows[0]) : null;
  }

  async function findDelivery(tenantId: string, webhookId: string, id: string): Promise<DeliveryJson | null> {
    const rows = await db.$queryRawUnsafe<DeliveryRow[]>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1::uuid AND webhook_id = $2::uuid AND tenant_id = $3::uuid`,
      id,
      webhookId,
      tenantId,
    );
    return rows[0] ? toDelivery(rows[0]) : null;
  }

  return {
    find,

    async create(
      tenantId: string,
      input: { url: string; events: string[]; description: string | null; secret: string },
    ): Promise<WebhookJson> {
      const rows = await db.$queryRawUnsafe<WebhookRow[]>(
        `INSERT INTO webhooks (tenant_id, url, events, description, secret) VALUES ($1::uuid, $2, $3::text[], $4, $5) RETURNING ${WEBHOOK_COLUMNS}`,
        tenantId,
        input.url,
        input.events,
        input.description,
        input.secret,
      );
      return toWebhook(rows[0]!);
    },

    /** Newest first; the total from list_counts ('webhooks'), `after` a keyset page. */
    async list(tenantId: string, page: PageRequest): Promise<{ items: WebhookJson[]; total: number }> {
      const keyset =
        page.after === undefined
          ? ''
          : 'AND (created_at, id) < (SELECT a.created_at, a.id FROM webhooks a WHERE a.id = $4::uuid AND a.tenant_id = $1::uuid)';
      const found = await keysetPage<WebhookRow>(
        rows,
        page,
        {
          page: {
            text: `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE tenant_id = $1::uuid ${keyset} ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT $3`,
            values: [
              tenantId,
              (page.page - 1) * page.per_page,
              page.per_page,
              ...(page.after === undefined ? [] : [page.after]),
            ],
          },
          total: listCountSql(tenantId, WEBHOOKS_LIST),
          exists: {
            text: 'SELECT 1 FROM webhooks WHERE id = $1::uuid AND tenant_id = $2::uuid',
            values: [page.after, tenantId],
          },
        },
        unknownAfterItem,
      );
      return { items: found.items.map(toWebhook), total: found.total };
    },

    /** Enabling clears the reason and the failure streak: the endpoint starts afresh. */
    async update(
      tenantId: string,
      id: string,
      changes: { url?: string; events?: string[]; description?: string | null; enabled?: boolean },
    ): Promise<WebhookJson | null> {
      const rows = await db.$queryRawUnsafe<WebhookRow[]>(
        `UPDATE webhooks SET
           url = COALESCE($3, url),
           events = COALESCE($4::text[], events),
           description = CASE WHEN $5::boolean THEN $6 ELSE description END,
           enabled = COALESCE($7::boolean, enabled),
           disabled_reason = CASE WHEN $7::boolean IS NOT NULL THEN NULL ELSE disabled_reason END,
           failing_since = CASE WHEN $7::boolean THEN NULL ELSE failing_since END,
           updated_at = now()
         WHERE id = $1::uuid AND tenant_id = $2::uuid
         RETURNING ${WEBHOOK_COLUMNS}`,
        id,
        tenantId,
        changes.url ?? null,
        changes.events ?? null,
        changes.description !== undefined,
        changes.description ?? null,
        changes.enabled ?? null,
      );
      return rows[0] ? toWebhook(rows[0]) : null;
    },

    /** Its deliveries go with it (ON DELETE CASCADE). */
    async remove(tenantId: string, id: string): Promise<boolean> {
      const count = await db.$executeRawUnsafe(
        'DELETE FROM webhooks WHERE id = $1::uuid AND tenant_id = $2::uuid',
        id,
        tenantId,
      );
      return count > 0;
    },

    /** A delivery of no event (`webhook.test`), due now. */
    async enqueueTest(tenantId: string, webhookId: string, eventType: string, body: string): Promise<DeliveryJson> {
      const rows = await db.$queryRawUnsafe<DeliveryRow[]>(
        `INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_type, body, next_attempt_at)
         VALUES ($1::uuid, $2::uuid, $3, $4, now()) RETURNING ${DELIVERY_COLUMNS}`,
        tenantId,
        webhookId,
        eventType,
        body,
      );
      return toDelivery(rows[0]!);
    },

    /**
     * Newest first, with or without a status: an index scan of (webhook_id[, status], created_at,
     * id) that stops at the page's end, the total from list_counts (per webhook, and per webhook
     * and status), `after` a keyset page.
     */
    async listDeliveries(
      tenantId: string,
      webhookId: string,
      status: DeliveryStatus | undefined,
      page: PageRequest,
    ): Promise<{ items: DeliveryJson[]; total: number }> {
      const values: unknown[] = [tenantId, webhookId, (page.page - 1) * page.per_page, page.per_page];
      let where = 'webhook_id = $2::uuid AND tenant_id = $1::uuid';
      if (status !== undefined) {
        values.push(status);
        where += ` AND status = $${values.length}`;
      }
      if (page.after !== undefined) {
        values.push(page.after);
        where +=
          ' AND (created_at, id) < (SELECT a.created_at, a.id FROM webhook_deliveries a WHERE a.id = ' +
          `$${values.length}::uuid AND a.webhook_id = $2::uuid AND a.tenant_id = $1::uuid)`;
      }
      const found = await keysetPage<DeliveryRow>(
        rows,
        page,
        {
          page: {
            text: `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE ${where} ORDER BY created_at DESC, id DESC OFFSET $3 LIMIT $4`,
            values,
          },
          total:
            status === undefined
              ? listCountSql(tenantId, DELIVERIES_LIST, { dimension: 'webhook_id', value: webhookId })
              : listCountSql(tenantId, DELIVERIES_LIST, {
                  dimension: 'webhook_status',
                  value: `${webhookId}/${status}`,
                }),
          exists: {
            text: 'SELECT 1 FROM webhook_deliveries WHERE id = $1::uuid AND webhook_id = $2::uuid AND tenant_id = $3::uuid',
            values: [page.after, webhookId, tenantId],
          },
        },
        unknownAfterItem,
      );
      return { items: found.items.map(toDelivery), total: found.total };
    },

    findDelivery,

    /**
     * Queues again every relayed event of the webhook's types that happened since `since` (never
     * before the webhook was subscribed): a delivery the event already has is due now again (same
     * id, same body), an event without one (the endpoint was disabled when it was relayed) gets a
     * new one. Events not relayed yet are left to the relay. Answers how many events were queued.
     */
    async recover(tenantId: string, webhookId: string, since: Date): Promise<number> {
      const [result] = await db.$queryRawUnsafe<{ requeued: number }[]>(
        `WITH hook AS (SELECT id, tenant_id, events, created_at FROM webhooks WHERE id = $1::uuid AND tenant_id = $2::uuid),
         picked AS (
           SELECT e.id, e.seq, e.tenant_id, e.type, e.resource_type, e.resource_id, e.occurred_at, e.data
           FROM events e, hook h
           WHERE e.tenant_id = h.tenant_id AND e.dispatched_at IS NOT NULL
             AND e.occurred_at >= GREATEST($3::timestamptz, h.created_at)
             AND (e.type = ANY (h.events) OR '*' = ANY (h.events))
         ),
         again AS (
           UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = now()
           FROM picked p WHERE d.webhook_id = $1::uuid AND d.event_id = p.id
           RETURNING d.event_id
         ),
         added AS (
           INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, resource_type, resource_id, event_seq, body, next_attempt_at)
           SELECT p.tenant_id, $1::uuid, p.id, p.type, p.resource_type, p.resource_id, p.seq,
                  ${eventBodySql('p')}, now()
           FROM picked p
           WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = $1::uuid AND d.event_id = p.id)
           RETURNING 1
         )
         SELECT ((SELECT count(*) FROM again) + (SELECT count(*) FROM added))::int AS requeued`,
        webhookId,
        tenantId,
        since,
      );
      return result!.requeued;
    },

    /** Due now again, with the same id and body; null when there is none, or an attempt is running right now. */
    async retryDelivery(tenantId: string, webhookId: string, id: string): Promise<DeliveryJson | null> {
      const rows = await db.$queryRawUnsafe<DeliveryRow[]>(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), locked_until = NULL
         WHERE id = $1::uuid AND webhook_id = $2::uuid AND tenant_id = $3::uuid AND (locked_until IS NULL OR locked_until <= now())
         RETURNING ${DELIVERY_COLUMNS}`,
        id,
        webhookId,
        tenantId,
      );
      return rows[0] ? toDelivery(rows[0]) : null;
    },
  };
}

export type WebhooksRepository = ReturnType<typeof createWebhooksRepository>;
