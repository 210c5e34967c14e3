import { IdParams, pageRequestOf, sendPage, LIST_PAGES_DOC, type ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { page } from '../shared/http.schemas';
import { AttachmentListQuery, AttachmentPageSchema } from './attachment.schemas';
import type { AttachmentsService } from './attachments.service';

const TAGS = ['Attachments'];

/** RFC 6266: the name quoted (in ASCII, anything else replaced), and as `filename*` in UTF-8 when it has more. */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const header = `attachment; filename="${ascii}"`;
  return ascii === filename
    ? header
    : `${header}; filename*=UTF-8''${encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

export function registerAttachmentRoutes(api: ApiRouter, attachments: AttachmentsService) {
  api.route({
    method: 'get',
    path: '/attachments',
    operationId: 'listAttachments',
    summary: 'List the files of inbound mail',
    description:
      "Newest first. `ticket_id` gives a ticket's files (those of the mail that opened it and of the mails that became its comments)." +
      LIST_PAGES_DOC,
    tags: TAGS,
    scope: 'read:tickets',
    query: AttachmentListQuery,
    responses: { 200: page('A page of attachments.', AttachmentPageSchema) },
    handler: async (req, res, { query: { page: pageNumber, per_page, after, ...filters } }) => {
      const paging = pageRequestOf({ page: pageNumber, per_page, after });
      const { items, total } = await attachments.list(tenantOf(req), filters, paging);
      sendPage(req, res, items, total, paging);
    },
  });

  api.route({
    method: 'get',
    path: '/attachments/:id',
    operationId: 'getAttachment',
    summary: 'The bytes of an attachment',
    description:
      'Always as a download (`Content-Disposition: attachment`, `X-Content-Type-Options: nosniff`): a file from a mail is never rendered inline. ' +
      'A content type that is not a plain `type/subtype` is answered as `application/octet-stream`.',
    tags: TAGS,
    scope: 'read:tickets',
    params: IdParams,
    responses: {
      200: {
        description: 'The file as it came in the mail.',
        contentType: ['application/octet-stream', '*/*'],
        headers: {
          'Content-Disposition': {
            description: '`attachment; filename="…"` (and `filename*` for a name beyond ASCII).',
            schema: { type: 'string' },
          },
          'X-Content-Type-Options': { description: '`nosniff`.', schema: { type: 'string' } },
        },
      },
    },
    handler: async (req, res, { params }) => {
      const file = await attachments.content(tenantOf(req), params.id);
      res
        .set({
          'Content-Disposition': contentDisposition(file.filename),
          'Content-Type': file.contentType,
          'X-Content-Type-Options': 'nosniff',
          'Content-Security-Policy': "default-src 'none'; sandbox",
        })
        .send(file.content);
    },
  });
}
