import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Uuid, named, pageQueryProperties, pageSchema, strictObject } from '@msp/http';
import { LONG_TEXT_MAX, Text } from '../shared/http.schemas';

export const CommentSchema = named(
  'Comment',
  Type.Object(
    {
      id: Uuid(),
      ticket_id: Uuid(),
      body: Type.String(),
      internal: Type.Boolean({ description: 'True for a note only the tenant\'s staff may read.' }),
      author: Type.String({ description: 'The API client (token `sub`) that wrote it.' }),
      created_at: DateTime(),
    },
    { additionalProperties: false },
  ),
);
export type Comment = Static<typeof CommentSchema>;

export const NewCommentSchema = named(
  'NewComment',
  strictObject({
    body: Text({ minLength: 1, maxLength: LONG_TEXT_MAX }),
    internal: Type.Optional(Type.Boolean({ default: false })),
  }),
);
export type NewComment = Static<typeof NewCommentSchema>;

export const CommentParams = Type.Object({
  id: Uuid({ description: 'The ticket id (UUID).' }),
  comment_id: Uuid({ description: 'The comment id (UUID).' }),
});

export const CommentListQuery = Type.Object({ ...pageQueryProperties }, { additionalProperties: false });
export const CommentPageSchema = pageSchema('CommentPage', CommentSchema);
