import { LINK_HEADER, pageRequestOf, sendPage, unprocessable, unprocessableResponse, type ApiRouter } from '@msp/http';
import { AuditEventPageSchema, AuditQuery } from './audit.schemas';
import type { AuditRepository } from './audit.repository';

export function registerAuditRoutes(api: ApiRouter, audit: AuditRepository) {
  api.route({
    method: 'get',
    path: '/audit-events',
    operationId: 'listAuditEvents',
    summary: 'Read the audit log',
    description:
      'Every change of your tenant in this service, newest first: who (`actor`), what (`action`, the resource, the changed fields with their ' +
      'old and new values as `{from, to}`; secrets never), when, and the request id. The same stream feeds the webhooks. ' +
      'Filters combine with AND; `from` is inclusive, `to` exclusive; `actor` matches the caller or the client it acted for. ' +
      '`pagination.total` is exact, read from counters kept with every change (no count of the log), and the first page with each single ' +
      'filter is as fast at ten million events as at a hundred thousand. Deep pages: follow the `Link` header\'s `next` (`after`, keyset), as fast ' +
      'at any depth; `page` reads and skips every event before its page. Events older than the service\'s retention (`EVENTS_RETENTION_DAYS`, ' +
      'default 400) are removed, except those with a webhook delivery still pending.',
    tags: ['Audit'],
    scope: 'admin:tenant',
    query: AuditQuery,
    responses: {
      200: { description: 'A page of audit events.', schema: AuditEventPageSchema, headers: LINK_HEADER },
      422: unprocessableResponse('`to` is not after `from`.'),
    },
    handler: async (req, res, { query: { page, per_page, after, ...filter } }) => {
      if (filter.from && filter.to && Date.parse(filter.to) <= Date.parse(filter.from)) {
        throw unprocessable('to must be after from.', { errors: [{ field: 'to', message: `must be after from (${filter.from})` }] });
      }
      const request = pageRequestOf({ page, per_page, after });
      const { items, total } = await audit.list(req.principal!.tenantId, filter, request);
      sendPage(req, res, items, total, request);
    },
  });
}
