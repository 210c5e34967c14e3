import { Type, type Static } from '@sinclair/typebox';
import {
  DateTime,
  Nullable,
  Uuid,
  named,
  stringEnum,
  keysetQueryProperties,
  pageQueryProperties,
  pageSchema,
  strictObject,
} from '@msp/http';
import { AttachmentListProperty } from '../attachments/attachment.schemas';
import { LONG_TEXT_MAX, Text } from '../shared/http.schemas';

export const COMMENT_AUTHOR_TYPES = ['technician', 'contact', 'system'] as const;

export const CommentSchema = named(
  'Comment',
  Type.Object(
    {
      id: Uuid(),
      ticket_id: Uuid(),
      body: Type.String(),
      internal: Type.Boolean({ description: "True for a note only the tenant's staff may read." }),
      author: Type.String({
        description:
          "The API client (token `sub`) that wrote it; for a contact's mail, the sender's address; `system` for desk itself.",
      }),
      author_type: stringEnum(COMMENT_AUTHOR_TYPES, {
        description: '`technician` (through the API), `contact` (a mail of a contact) or `system`.',
      }),
      author_contact_id: Nullable(
        Uuid({ description: 'The contact who wrote it when `author_type` is `contact`; else null.' }),
      ),
      created_at: DateTime(),
      merged_from_ticket_id: Nullable(
        Uuid({ description: 'The ticket the comment was written on, when a merge moved it to this one; else null.' }),
      ),
      attachments: AttachmentListProperty,
    },
    {
      additionalProperties: false,
      examples: [
        {
          id: '5e8a1f2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b',
          ticket_id: '7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70',
          body: 'Replaced the fuser unit; duplex printing works again.',
          internal: false,
          author: 'dev-7f3a9c',
          author_type: 'technician',
          author_contact_id: null,
          created_at: '2026-11-23T09:02:11.000Z',
          merged_from_ticket_id: null,
          attachments: [],
        },
      ],
    },
  ),
);
export type Comment = Static<typeof CommentSchema>;

export const NewCommentSchema = named(
  'NewComment',
  strictObject(
    {
      body: Text({ minLength: 1, maxLength: LONG_TEXT_MAX }),
      internal: Type.Optional(
        Type.Boolean({ default: false, description: "True for a note only the tenant's staff may read." }),
      ),
    },
    { examples: [{ body: 'Replaced the fuser unit; duplex printing works again.', internal: false }] },
  ),
);
export type NewComment = Static<typeof NewCommentSchema>;

export const CommentParams = Type.Object({
  id: Uuid({ description: 'The ticket id (UUID).' }),
  comment_id: Uuid({ description: 'The comment id (UUID).' }),
});

export const CommentListQuery = Type.Object(
  { ...pageQueryProperties, ...keysetQueryProperties },
  { additionalProperties: false },
);
export const CommentPageSchema = pageSchema('CommentPage', CommentSchema);
