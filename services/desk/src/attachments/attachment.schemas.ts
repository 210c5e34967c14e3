import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, Uuid, named, keysetQueryProperties, pageQueryProperties, pageSchema } from '@msp/http';

/** How a ticket or comment lists the files of the mail it came from. */
export const AttachmentRefSchema = named(
  'AttachmentRef',
  Type.Object(
    {
      id: Uuid({ description: 'Read the bytes with `GET /attachments/{id}`.' }),
      filename: Type.String(),
      content_type: Type.String(),
      size_bytes: Type.Integer({ minimum: 0 }),
    },
    {
      additionalProperties: false,
      examples: [
        {
          id: '4c3b2a19-0f8e-4d7c-9b6a-5f4e3d2c1b0a',
          filename: 'error.png',
          content_type: 'image/png',
          size_bytes: 48213,
        },
      ],
    },
  ),
);
export type AttachmentRef = Static<typeof AttachmentRefSchema>;

export const AttachmentListProperty = Type.Array(AttachmentRefSchema, {
  description: 'The files of the mail it came from (`GET /attachments/{id}`); empty if none.',
});

export const AttachmentSchema = named(
  'Attachment',
  Type.Object(
    {
      id: Uuid(),
      filename: Type.String(),
      content_type: Type.String(),
      size_bytes: Type.Integer({ minimum: 0 }),
      ticket_id: Nullable(Uuid()),
      comment_id: Nullable(Uuid({ description: 'The comment the mail became; null when it opened the ticket.' })),
      inbound_email_id: Nullable(Uuid({ description: 'The entry of the inbound log it came with.' })),
      created_at: DateTime(),
    },
    {
      additionalProperties: false,
      description: 'A file of an inbound mail; its bytes are `GET /attachments/{id}`.',
      examples: [
        {
          id: '4c3b2a19-0f8e-4d7c-9b6a-5f4e3d2c1b0a',
          filename: 'error.png',
          content_type: 'image/png',
          size_bytes: 48213,
          ticket_id: '7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70',
          comment_id: null,
          inbound_email_id: '8e7d6c5b-4a3f-4e2d-9c1b-0a9f8e7d6c5b',
          created_at: '2026-11-02T10:01:00.000Z',
        },
      ],
    },
  ),
);
export type Attachment = Static<typeof AttachmentSchema>;

export const AttachmentListQuery = Type.Object(
  {
    ...pageQueryProperties,
    ...keysetQueryProperties,
    ticket_id: Type.Optional(Uuid({ description: "The files of this ticket (its own and its comments')." })),
    comment_id: Type.Optional(Uuid()),
    inbound_email_id: Type.Optional(Uuid()),
  },
  { additionalProperties: false },
);
export type AttachmentFilters = Pick<
  Static<typeof AttachmentListQuery>,
  'ticket_id' | 'comment_id' | 'inbound_email_id'
>;
export const AttachmentPageSchema = pageSchema('AttachmentPage', AttachmentSchema);
