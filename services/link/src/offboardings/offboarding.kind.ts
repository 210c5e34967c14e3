import { conflict, unprocessable } from '@msp/http';
import type { Selectable } from 'kysely';
import type { Offboarding } from '../generated/kysely/database';
import { activeDeskUser } from '../runs/desk-users';
import { runColumnsOf } from '../runs/runs.repository';
import { runDate } from '../runs/run-dates';
import type { RunKind, RunKindDeps } from '../runs/run-kind';
import { offboardingJson } from './offboarding.mapper';
import type { CreateOffboardingBody } from './offboarding.schemas';
import { offboardingSteps, type NewOffboarding, type OffboardingRecord } from './offboarding.tasks';

/** Offboarding as a kind of run: its table, its checks, its steps. */
export function offboardingKind(deps: RunKindDeps): RunKind<OffboardingRecord, CreateOffboardingBody, NewOffboarding> {
  const { desk, tenants } = deps;
  return {
    name: 'offboarding',
    table: {
      table: 'offboardings',
      taskKey: 'offboarding_id',
      // One open offboarding per user.
      openColumn: 'open_user_id',
      openIndex: 'offboardings_owner_tenant_id_open_user_id_key',
      columnsOf: (input) => ({
        user_id: input.userId,
        successor_id: input.successorId,
        email: input.email,
        managed_tenant_id: input.managedTenantId,
        last_day: input.lastDay,
        mailbox_retention_days: input.mailboxRetentionDays,
      }),
      toRun: (row: Selectable<Offboarding>, tasks) => ({
        ...runColumnsOf(row, tasks),
        status: row.status,
        userId: row.user_id,
        successorId: row.successor_id,
        email: row.email,
        managedTenantId: row.managed_tenant_id,
        lastDay: row.last_day,
        mailboxRetentionDays: row.mailbox_retention_days,
        directoryUserId: row.directory_user_id,
      }),
    },
    steps: offboardingSteps(deps),
    json: offboardingJson,

    async prepare(ownerTenantId, body, now) {
      const lastDay = runDate('last_day', body.last_day, now);
      if (body.user_id === body.successor_id) {
        throw unprocessable('successor_id must be someone other than the leaving user.', {
          errors: [{ field: 'successor_id', message: 'must differ from user_id' }],
        });
      }
      const user = await activeDeskUser(desk, ownerTenantId, body.user_id);
      const successor = await activeDeskUser(desk, ownerTenantId, body.successor_id);
      const errors = [
        ...(user ? [] : [{ field: 'user_id', message: 'does not name an active desk user of your tenant' }]),
        ...(successor ? [] : [{ field: 'successor_id', message: 'does not name an active desk user of your tenant' }]),
      ];
      if (errors.length)
        throw unprocessable(`${errors.map((e) => e.field).join(' and ')} must name active desk users of your tenant.`, {
          errors,
        });

      const email = user!.email.toLowerCase();
      // The directory is known now if its managed tenant is registered; if not, it is looked up
      // again when the tasks are due (the tenant may be registered by then).
      const tenant = await tenants.findByDomain(ownerTenantId, email.slice(email.lastIndexOf('@') + 1));
      return {
        userId: body.user_id,
        successorId: body.successor_id,
        email,
        managedTenantId: tenant?.id ?? null,
        lastDay,
        mailboxRetentionDays: body.mailbox_retention_days,
      };
    },

    openKey: (run) => run.userId,
    openConflict: (run) =>
      conflict(`An offboarding of user ${run.userId} is already scheduled or in progress.`, {
        errors: [{ field: 'user_id', message: 'is already being offboarded' }],
      }),

    cancel: {
      // Only while nothing has run: a scheduled run becomes cancelled, its jobs are dropped.
      refusal: (run) =>
        run.status === 'scheduled'
          ? null
          : `The offboarding is ${run.status}: only a scheduled offboarding, of which nothing has run yet, can be cancelled.`,
      detail: () => 'Cancelled before it was due.',
    },
  };
}
