import { LINK_HEADER, pageWindow, sendPage, unprocessable, unprocessableResponse, type ApiRouter } from '@msp/http';
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
      'Filters combine with AND; `from` is inclusive, `to` exclusive; `actor` matches the caller or the client it acted for.',
    tags: ['Audit'],
    scope: 'admin:tenant',
    query: AuditQuery,
    responses: {
      200: { description: 'A page of audit events.', schema: AuditEventPageSchema, headers: LINK_HEADER },
      422: unprocessableResponse('`to` is not after `from`.'),
    },
    handler: async (req, res, { query: { page, per_page, ...filter } }) => {
      if (filter.from && filter.to && Date.parse(filter.to) <= Date.parse(filter.from)) {
        throw unprocessable('to must be after from.', { errors: [{ field: 'to', message: `must be after from (${filter.from})` }] });
      }
      const { items, total } = await audit.list(req.principal!.tenantId, filter, pageWindow({ page, per_page }));
      sendPage(req, res, items, total, { page, per_page });
    },
  });
}
