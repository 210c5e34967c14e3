import {
  LINK_HEADER,
  pageRequestOf,
  sendPage,
  unprocessable,
  unprocessableResponse,
  validationFailed,
  type ApiRouter,
} from '@msp/http';
import { AuditEventPageSchema, auditQuery } from './audit.schemas';
import type { AuditRepository } from './audit.repository';

/** `type` split into its event types, each one of `known` and each once (else a 400 naming `type`). */
function typesOf(type: string | undefined, known: readonly string[]): string[] | undefined {
  if (type === undefined) return undefined;
  const types = type.split(',');
  const unknown = types.filter((name) => !known.includes(name));
  if (unknown.length)
    throw validationFailed(
      [
        {
          field: 'type',
          message: `names no event type of this service: ${unknown.join(', ')} (known: ${known.join(', ')})`,
        },
      ],
      'One or more query parameters are not valid.',
    );
  const twice = types.filter((name, index) => types.indexOf(name) !== index);
  if (twice.length)
    throw validationFailed(
      [{ field: 'type', message: `names ${[...new Set(twice)].join(', ')} more than once` }],
      'One or more query parameters are not valid.',
    );
  return types;
}

/** `eventTypes`: the service's event types, which `type` may name. */
export function registerAuditRoutes(api: ApiRouter, audit: AuditRepository, eventTypes: readonly string[]) {
  api.route({
    method: 'get',
    path: '/audit-events',
    operationId: 'listAuditEvents',
    summary: 'Read the audit log',
    description:
      'Every change of your tenant in this service, newest first: who (`actor`), what (`action`, the resource, the changed fields with their ' +
      'old and new values as `{from, to}`; secrets never), when, and the request id. The same stream feeds the webhooks. ' +
      'Filters combine with AND; `type` names one or several event types (`ticket.updated`, or ' +
      '`ticket.created,ticket.updated`: any of them); `from` is inclusive, `to` exclusive; ' +
      '`actor` matches the caller or the client it acted for. ' +
      `This service's event types: ${eventTypes.map((name) => `\`${name}\``).join(', ')}. ` +
      '`pagination.total` is exact, read from counters kept with every change (no count of the log), and the first page with each single ' +
      "filter is as fast at ten million events as at a hundred thousand. Deep pages: follow the `Link` header's `next` (`after`, keyset), as fast " +
      "at any depth; `page` reads and skips every event before its page. Events older than the service's retention (`EVENTS_RETENTION_DAYS`, " +
      'default 400) are removed, except those with a webhook delivery still pending.',
    tags: ['Audit'],
    scope: 'admin:tenant',
    query: auditQuery(eventTypes),
    responses: {
      200: { description: 'A page of audit events.', schema: AuditEventPageSchema, headers: LINK_HEADER },
      422: unprocessableResponse('`to` is not after `from`.'),
    },
    handler: async (req, res, { query: { page, per_page, after, type, ...filter } }) => {
      const types = typesOf(type, eventTypes);
      if (filter.from && filter.to && Date.parse(filter.to) <= Date.parse(filter.from)) {
        throw unprocessable('to must be after from.', {
          errors: [{ field: 'to', message: `must be after from (${filter.from})` }],
        });
      }
      const request = pageRequestOf({ page, per_page, after });
      const { items, total } = await audit.list(
        req.principal!.tenantId,
        { ...filter, ...(types ? { types } : {}) },
        request,
      );
      sendPage(req, res, items, total, request);
    },
  });
}
