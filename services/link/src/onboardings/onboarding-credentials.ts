import { AppError, conflict, notFound } from '@msp/http';
import type { Db } from '../db';

/**
 * A joiner's initial password (LDAP connectors make one): sealed under CONNECTOR_ENCRYPTION_KEY on
 * the onboarding, shown once to an `admin:tenant` caller and then erased. It is never logged, never
 * in a task's detail or result, never in a ticket.
 */
export function createOnboardingCredentials(db: Db, secrets: { open(sealed: string): string }) {
  return {
    /** Kept by create_account when the directory made a password. */
    async store(runId: string, userName: string, initialPasswordSealed: string): Promise<void> {
      await db
        .updateTable('onboardings')
        .set({
          directory_user_name: userName,
          initial_password_encrypted: initialPasswordSealed,
          credentials_retrieved_at: null,
        })
        .where('id', '=', runId)
        .execute();
    },

    /** Once: the user name and the password, which is erased as it is read. */
    async retrieve(ownerTenantId: string, id: string): Promise<{ userName: string; initialPassword: string }> {
      return db.transaction().execute(async (tx) => {
        const row = await tx
          .selectFrom('onboardings')
          .select([
            'directory_user_name',
            'initial_password_encrypted',
            'credentials_retrieved_at',
            'directory_user_id',
          ])
          .where('id', '=', id)
          .where('owner_tenant_id', '=', ownerTenantId)
          .forUpdate()
          .executeTakeFirst();
        if (!row) throw notFound(`No onboarding ${id}.`);
        if (row.credentials_retrieved_at) {
          throw new AppError(
            410,
            `The initial password of onboarding ${id} was retrieved at ` +
              `${row.credentials_retrieved_at.toISOString()} and is no longer kept; reset the password in the ` +
              'directory if it was lost.',
            {
              code: 'credentials_already_retrieved',
              title: 'Gone',
            },
          );
        }
        if (!row.initial_password_encrypted || !row.directory_user_name) {
          throw conflict(
            row.directory_user_id
              ? `Onboarding ${id} created its account without an initial password link knows (the directory set it): there are no credentials to retrieve.`
              : `Onboarding ${id} has not created its account yet; retrieve the credentials once create_account has succeeded.`,
            { code: 'credentials_not_ready' },
          );
        }
        await tx
          .updateTable('onboardings')
          .set({ initial_password_encrypted: null, credentials_retrieved_at: new Date() })
          .where('id', '=', id)
          .execute();
        return { userName: row.directory_user_name, initialPassword: secrets.open(row.initial_password_encrypted) };
      });
    },
  };
}

export type OnboardingCredentials = ReturnType<typeof createOnboardingCredentials>;
