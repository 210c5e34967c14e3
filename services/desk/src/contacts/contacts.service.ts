import { changesBetween } from '@msp/events';
import { conflict, notFound, unprocessable, type PageRequest } from '@msp/http';
import { unlessDuplicate, unlessReferenced } from '../db';
import type { Repositories, Store } from '../store';
import type { Contact, ContactChanges, ContactFilters, NewContact } from './contact.schemas';
import type { ContactWrite } from './contacts.repository';

export const contactNotFound = () => notFound('No contact with this id exists in your tenant.');
export const emailTaken = () =>
  conflict(
    "An address given is already another contact's in your tenant (addresses are compared case-insensitively).",
    { code: 'email-taken' },
  );
const requestedTickets = () =>
  conflict('The contact requested tickets: it cannot be deleted while tickets name it as their requester.', {
    code: 'contact-in-use',
  });

/** Addresses as stored: lower-cased, the primary first, each once. */
export function addressesOf(primary: string, others: string[] = []): string[] {
  return [...new Set([primary, ...others].map((address) => address.toLowerCase()))];
}

async function assertClient(tx: Repositories, tenantId: string, clientId: string | null | undefined) {
  if (clientId && !(await tx.clients.findForUpdate(tenantId, clientId))) {
    const message = 'does not name a client of your tenant';
    throw unprocessable(`client_id ${message}.`, {
      code: 'unknown-reference',
      errors: [{ field: 'client_id', message }],
    });
  }
}

/**
 * Creates a contact inside the caller's transaction and records `contact.created`; a taken address
 * fails on contact_emails' primary key (the caller maps it with unlessDuplicate).
 */
export async function createContactIn(tx: Repositories, tenantId: string, input: NewContact): Promise<Contact> {
  await assertClient(tx, tenantId, input.client_id);
  const emails = addressesOf(input.email, input.emails);
  const contact = await tx.contacts.create(
    tenantId,
    {
      name: input.name,
      email: emails[0]!,
      clientId: input.client_id ?? null,
      phone: input.phone ?? null,
      language: input.language ?? null,
    },
    emails,
  );
  await tx.events.record({
    type: 'contact.created',
    tenantId,
    resourceType: 'contact',
    resourceId: contact.id,
    object: contact,
  });
  return contact;
}

export function createContactsService(store: Store) {
  async function get(tenantId: string, id: string): Promise<Contact> {
    const contact = await store.contacts.findById(tenantId, id);
    if (!contact) throw contactNotFound();
    return contact;
  }

  return {
    get,

    list(tenantId: string, filters: ContactFilters, page: PageRequest) {
      return store.contacts.list(tenantId, filters, page);
    },

    create(tenantId: string, input: NewContact): Promise<Contact> {
      return unlessDuplicate(
        store.transaction((tx) => createContactIn(tx, tenantId, input)),
        emailTaken,
      );
    },

    /** Asking for what the contact already is changes nothing and records no event. */
    update(tenantId: string, id: string, changes: ContactChanges): Promise<Contact> {
      const updated = store.transaction(async (tx) => {
        const contact = await tx.contacts.findForUpdate(tenantId, id);
        if (!contact) throw contactNotFound();
        const primary = (changes.email ?? contact.email).toLowerCase();
        const emails = changes.emails
          ? addressesOf(primary, changes.emails)
          : changes.email
            ? addressesOf(primary, contact.emails)
            : contact.emails;
        const wanted: Contact = {
          ...contact,
          ...changes,
          email: primary,
          emails,
          email_status: 'ok',
        };
        if (Object.keys(changesBetween(contact, wanted)).length === 0) return contact;
        await assertClient(tx, tenantId, changes.client_id);
        const write: ContactWrite = {
          name: changes.name,
          email: primary,
          clientId: changes.client_id,
          phone: changes.phone,
          language: changes.language,
          emailStatus: 'ok',
        };
        const after = await tx.contacts.update(tenantId, id, write, emails);
        await tx.events.record({
          type: 'contact.updated',
          tenantId,
          resourceType: 'contact',
          resourceId: id,
          object: after,
          before: contact,
        });
        return after;
      });
      return unlessDuplicate(updated, emailTaken);
    },

    /** A contact that requested tickets stays (409); its comments keep their text. */
    delete(tenantId: string, id: string): Promise<void> {
      const deleted = store.transaction(async (tx) => {
        const contact = await tx.contacts.findForUpdate(tenantId, id);
        if (!contact) throw contactNotFound();
        if (await tx.contacts.hasTickets(tenantId, id)) throw requestedTickets();
        await tx.contacts.delete(tenantId, id);
        await tx.events.record({
          type: 'contact.deleted',
          tenantId,
          resourceType: 'contact',
          resourceId: id,
          object: contact,
        });
      });
      return unlessReferenced(deleted, requestedTickets);
    },
  };
}

export type ContactsService = ReturnType<typeof createContactsService>;
