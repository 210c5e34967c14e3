import { IdParams, pageRequestOf, sendPage, LIST_PAGES_DOC, type ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { created, page, sendCreated, unprocessableResponse } from '../shared/http.schemas';
import { TicketRuleProblem } from '../tickets/ticket.schemas';
import { CommentListQuery, CommentParams, CommentPageSchema, CommentSchema, NewCommentSchema } from './comment.schemas';
import type { CommentsService } from './comments.service';

const TAGS = ['Comments'];

export function registerCommentRoutes(api: ApiRouter, comments: CommentsService) {
  api.route({
    method: 'get',
    path: '/tickets/:id/comments',
    operationId: 'listTicketComments',
    summary: 'List the comments of a ticket',
    description: 'Oldest first (`created_at` ascending, then `id`).' + LIST_PAGES_DOC,
    tags: TAGS,
    scope: 'read:tickets',
    params: IdParams,
    query: CommentListQuery,
    responses: { 200: page('A page of comments.', CommentPageSchema) },
    handler: async (req, res, { params, query }) => {
      const paging = pageRequestOf(query);
      const { items, total } = await comments.list(tenantOf(req), params.id, paging);
      sendPage(req, res, items, total, paging);
    },
  });

  api.route({
    method: 'get',
    path: '/tickets/:id/comments/:comment_id',
    operationId: 'getTicketComment',
    summary: 'Read a comment',
    tags: TAGS,
    scope: 'read:tickets',
    params: CommentParams,
    responses: { 200: { description: 'The comment.', schema: CommentSchema } },
    handler: async (req, res, { params }) => {
      res.json(await comments.get(tenantOf(req), params.id, params.comment_id));
    },
  });

  api.route({
    method: 'post',
    path: '/tickets/:id/comments',
    operationId: 'createTicketComment',
    summary: 'Comment on a ticket',
    description: 'The author is the API client of the access token. `internal` defaults to false.',
    tags: TAGS,
    scope: 'write:tickets',
    params: IdParams,
    body: NewCommentSchema,
    responses: {
      201: created('The created comment.', CommentSchema),
      422: unprocessableResponse('The ticket is closed.', TicketRuleProblem),
    },
    handler: async (req, res, { params, body }) => {
      const comment = await comments.create(tenantOf(req), params.id, req.principal!.clientId, body);
      sendCreated(res, `/tickets/${params.id}/comments`, comment);
    },
  });
}
