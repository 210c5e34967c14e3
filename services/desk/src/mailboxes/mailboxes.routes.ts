import { Type } from '@sinclair/typebox';
import { IdParams, pageRequestOf, sendPage, LIST_PAGES_DOC, type ApiRouter } from '@msp/http';
import { ADMIN_SCOPE, tenantOf } from '@msp/auth';
import { created, page, sendCreated, unprocessableResponse } from '../shared/http.schemas';
import {
  InboundEmailSchema,
  InboundListQuery,
  InboundPageSchema,
  InboundReplaySchema,
  MailboxChangesSchema,
  MailboxHealthSchema,
  MailboxListQuery,
  MailboxPageSchema,
  MailboxSchema,
  NewMailboxSchema,
  TicketEmailListSchema,
} from './mailbox.schemas';
import type { MailboxesService } from './mailboxes.service';

const TAGS = ['Mailboxes'];
const INBOUND_TAGS = ['Inbound e-mail'];

export function registerMailboxRoutes(api: ApiRouter, mailboxes: MailboxesService) {
  api.route({
    method: 'get',
    path: '/mailboxes',
    operationId: 'listMailboxes',
    summary: 'List mailboxes',
    description: 'Newest first.' + LIST_PAGES_DOC,
    tags: TAGS,
    scope: ADMIN_SCOPE,
    query: MailboxListQuery,
    responses: { 200: page('A page of mailboxes.', MailboxPageSchema) },
    handler: async (req, res, { query }) => {
      const paging = pageRequestOf(query);
      const { items, total } = await mailboxes.list(tenantOf(req), paging);
      sendPage(req, res, items, total, paging);
    },
  });

  api.route({
    method: 'post',
    path: '/mailboxes',
    operationId: 'createMailbox',
    summary: 'Connect a mailbox',
    description:
      'Passwords are stored encrypted and never answered (`password_set`). An address the tenant has a mailbox of is a 409. Polling starts at once.',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    body: NewMailboxSchema,
    errors: [409],
    responses: {
      201: created('The mailbox.', MailboxSchema),
      422: unprocessableResponse('`default_client_id` names no client of the tenant.'),
    },
    handler: async (req, res, { body }) => {
      sendCreated(res, '/mailboxes', await mailboxes.create(tenantOf(req), body));
    },
  });

  api.route({
    method: 'get',
    path: '/mailboxes/:id',
    operationId: 'getMailbox',
    summary: 'Read a mailbox',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    responses: { 200: { description: 'The mailbox.', schema: MailboxSchema } },
    load: (req, { params }) => mailboxes.get(tenantOf(req), params.id),
  });

  api.route({
    method: 'patch',
    path: '/mailboxes/:id',
    operationId: 'updateMailbox',
    summary: 'Change a mailbox',
    description:
      'A JSON merge patch (RFC 7396): `imap` and `smtp` merge into the stored settings, so `{"imap": {"password": "…"}}` changes the password alone.',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    body: MailboxChangesSchema,
    errors: [409],
    responses: {
      200: { description: 'The mailbox after the change.', schema: MailboxSchema },
      422: unprocessableResponse('`default_client_id` names no client of the tenant.'),
    },
    handler: async (req, res, { params, body }) => {
      res.json(await mailboxes.update(tenantOf(req), params.id, body));
    },
  });

  api.route({
    method: 'delete',
    path: '/mailboxes/:id',
    operationId: 'deleteMailbox',
    summary: 'Disconnect a mailbox',
    description:
      'Tickets and the inbound log keep what came in through it (their `mailbox_id` becomes null in the log).',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    responses: { 204: { description: 'Deleted.' } },
    handler: async (req, res, { params }) => {
      await mailboxes.delete(tenantOf(req), params.id);
      res.status(204).end();
    },
  });

  api.route({
    method: 'post',
    path: '/mailboxes/:id/poll',
    operationId: 'pollMailbox',
    summary: 'Poll a mailbox now',
    description:
      'Reads the mailbox now instead of at its next interval (unless a poll of it is under way on any ' +
      'instance). Watch `GET /mailboxes/{id}/health` and `GET /inbound-emails`.',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    responses: {
      202: {
        description: 'A poll was started.',
        schema: Type.Object(
          { status: Type.Literal('polling') },
          { additionalProperties: false, examples: [{ status: 'polling' }] },
        ),
      },
    },
    handler: async (req, res, { params }) => {
      await mailboxes.pollNow(tenantOf(req), params.id);
      res.status(202).json({ status: 'polling' });
    },
  });

  api.route({
    method: 'get',
    path: '/mailboxes/:id/health',
    operationId: 'getMailboxHealth',
    summary: "How a mailbox's polls go",
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    responses: {
      200: {
        description: '`failing` with `last_error` while its polls fail; polls back off then and it recovers by itself.',
        schema: MailboxHealthSchema,
      },
    },
    handler: async (req, res, { params }) => {
      res.json(await mailboxes.health(tenantOf(req), params.id));
    },
  });

  api.route({
    method: 'get',
    path: '/tickets/:id/emails',
    operationId: 'listTicketEmails',
    summary: 'The mail of a ticket, in and out',
    description:
      'Oldest first: the mails that came in on the ticket and the replies desk sent (or is retrying) from its public comments.',
    tags: ['Tickets'],
    scope: 'read:tickets',
    params: IdParams,
    responses: { 200: { description: "The ticket's e-mails.", schema: TicketEmailListSchema } },
    handler: async (req, res, { params }) => {
      res.json({ data: await mailboxes.ticketEmails(tenantOf(req), params.id) });
    },
  });

  api.route({
    method: 'get',
    path: '/inbound-emails',
    operationId: 'listInboundEmails',
    summary: 'List the mail read from mailboxes',
    description: 'Newest first (`received_at`). Every message a poll read, whatever came of it.' + LIST_PAGES_DOC,
    tags: INBOUND_TAGS,
    scope: ADMIN_SCOPE,
    query: InboundListQuery,
    responses: { 200: page('A page of the inbound log.', InboundPageSchema) },
    handler: async (req, res, { query: { page: pageNumber, per_page, after, ...filters } }) => {
      const paging = pageRequestOf({ page: pageNumber, per_page, after });
      const { items, total } = await mailboxes.listInbound(tenantOf(req), filters, paging);
      sendPage(req, res, items, total, paging);
    },
  });

  api.route({
    method: 'get',
    path: '/inbound-emails/:id',
    operationId: 'getInboundEmail',
    summary: 'Read an entry of the inbound log',
    tags: INBOUND_TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    responses: { 200: { description: 'The entry.', schema: InboundEmailSchema } },
    handler: async (req, res, { params }) => {
      res.json(await mailboxes.getInbound(tenantOf(req), params.id));
    },
  });

  api.route({
    method: 'get',
    path: '/inbound-emails/:id/raw',
    operationId: 'getInboundEmailRaw',
    summary: 'The message as it was read',
    description:
      "The raw message (`message/rfc822`), as an attachment. A message over its mailbox's `max_message_bytes` was not stored: 404.",
    tags: INBOUND_TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    responses: {
      200: {
        description: 'The raw message.',
        contentType: ['message/rfc822'],
        headers: {
          'Content-Disposition': { description: '`attachment; filename="message.eml"`.', schema: { type: 'string' } },
        },
      },
    },
    handler: async (req, res, { params }) => {
      const raw = await mailboxes.rawInbound(tenantOf(req), params.id);
      res
        .set({
          'Content-Type': 'message/rfc822',
          'Content-Disposition': 'attachment; filename="message.eml"',
          'X-Content-Type-Options': 'nosniff',
        })
        .send(raw);
    },
  });

  api.route({
    method: 'post',
    path: '/inbound-emails/:id/replay',
    operationId: 'replayInboundEmail',
    summary: 'Make a ticket or comment of a message that became none',
    description:
      "For a `quarantined`, `ignored` or `failed` entry: `create_ticket` opens an e-mail ticket of the sender (of `client_id`, else the sender's contact's " +
      "client, the client of its domain, or the mailbox's `default_client_id`), `attach` makes it a public comment of the sender on `ticket_id`; the " +
      "mail's files are kept as inbound processing keeps them. The entry becomes `processed` with `ticket_id` (and `comment_id`). A processed entry, or one " +
      'a poll is processing, is a 409; a refusal changes nothing. A message that was not stored (`too_large`) or cannot be parsed becomes a ticket of what ' +
      'the log knows of it (sender, subject).',
    tags: INBOUND_TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    body: InboundReplaySchema,
    idempotent: true,
    errors: [409],
    responses: {
      200: { description: 'The entry, now `processed`.', schema: InboundEmailSchema },
      422: unprocessableResponse(
        '`ticket_id` or `client_id` names nothing of the tenant, the ticket was merged, or no ' +
          'client is known for the sender (`urn:msp:problem:client-required`).',
      ),
    },
    handler: async (req, res, { params, body }) => {
      res.json(await mailboxes.replayInbound(tenantOf(req), params.id, body));
    },
  });
}
