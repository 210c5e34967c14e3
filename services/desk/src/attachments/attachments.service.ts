import { notFound, type PageRequest } from '@msp/http';
import type { Store } from '../store';
import type { AttachmentFilters } from './attachment.schemas';

/** A content type as a browser could act on it, else the one that only downloads. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;

export function createAttachmentsService(store: Store) {
  return {
    list(tenantId: string, filters: AttachmentFilters, page: PageRequest) {
      return store.attachments.list(tenantId, filters, page);
    },

    async content(tenantId: string, id: string) {
      const found = await store.attachments.findContent(tenantId, id);
      if (!found) throw notFound('No attachment with this id exists in your tenant.');
      return {
        ...found,
        contentType: MEDIA_TYPE.test(found.contentType) ? found.contentType.toLowerCase() : 'application/octet-stream',
      };
    },
  };
}

export type AttachmentsService = ReturnType<typeof createAttachmentsService>;
