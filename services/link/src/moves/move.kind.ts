import { conflict, unprocessable } from '@msp/http';
import type { Selectable } from 'kysely';
import type { Move } from '../generated/kysely/database';
import { activeDeskUser } from '../runs/desk-users';
import { runColumnsOf } from '../runs/runs.repository';
import { domainOf } from '../runs/person-account';
import { runDate } from '../runs/run-dates';
import type { RunKind, RunKindDeps } from '../runs/run-kind';
import { moveJson } from './move.mapper';
import type { CreateMoveBody } from './move.schemas';
import { moveSteps, type MovePhysical, type MoveRecord, type NewMove } from './move.tasks';
import type { MoveChecksRepository } from './moves.repository';

/** A mover as a kind of run: its table, its checks, its steps. */
export function moveKind(
  deps: RunKindDeps,
  checks: MoveChecksRepository,
): RunKind<MoveRecord, CreateMoveBody, NewMove> {
  const { desk, tenants } = deps;
  return {
    name: 'move',
    table: {
      table: 'moves',
      taskKey: 'move_id',
      // One open move per user and effective date.
      openColumn: 'open_key',
      openIndex: 'moves_owner_tenant_id_open_key_key',
      columnsOf: (input) => ({
        user_id: input.userId,
        email: input.email,
        managed_tenant_id: input.managedTenantId,
        effective_date: input.effectiveDate,
        department: input.department,
        manager_id: input.managerId,
        manager_email: input.managerEmail,
        job_title: input.jobTitle,
        bundles_add: input.bundlesAdd,
        bundles_remove: input.bundlesRemove,
        physical: input.physical ?? null,
      }),
      toRun: (row: Selectable<Move>, tasks) => ({
        ...runColumnsOf(row, tasks),
        status: row.status,
        userId: row.user_id,
        email: row.email,
        managedTenantId: row.managed_tenant_id,
        effectiveDate: row.effective_date,
        department: row.department,
        managerId: row.manager_id,
        managerEmail: row.manager_email,
        jobTitle: row.job_title,
        bundlesAdd: row.bundles_add,
        bundlesRemove: row.bundles_remove,
        physical: row.physical as MovePhysical | null,
        directoryUserId: row.directory_user_id,
      }),
    },
    steps: moveSteps(deps),
    json: moveJson,

    async prepare(ownerTenantId, body, now) {
      const effectiveDate = runDate('effective_date', body.effective_date, now);
      const add = body.bundles.add ?? [];
      const remove = body.bundles.remove ?? [];
      const both = add.filter((name) => remove.includes(name));
      if (both.length) {
        throw unprocessable(`A group cannot be both added and removed: ${both.join(', ')}.`, {
          errors: [{ field: 'bundles.remove', message: `names a group also in bundles.add (${both.join(', ')})` }],
        });
      }
      const user = await activeDeskUser(desk, ownerTenantId, body.user_id);
      const manager = body.manager_id ? await activeDeskUser(desk, ownerTenantId, body.manager_id) : null;
      const errors = [
        ...(user ? [] : [{ field: 'user_id', message: 'does not name an active desk user of your tenant' }]),
        ...(body.manager_id && !manager
          ? [{ field: 'manager_id', message: 'does not name an active desk user of your tenant' }]
          : []),
      ];
      if (errors.length)
        throw unprocessable(`${errors.map((e) => e.field).join(' and ')} must name active desk users of your tenant.`, {
          errors,
        });
      if (manager && manager.id === user!.id) {
        throw unprocessable('manager_id must be someone other than the moving user.', {
          errors: [{ field: 'manager_id', message: 'must differ from user_id' }],
        });
      }

      const lastDay = await checks.scheduledLastDay(ownerTenantId, body.user_id);
      // Both YYYY-MM-DD: they compare as text.
      if (lastDay && effectiveDate > lastDay) {
        throw unprocessable(
          `The user leaves on ${lastDay} (a scheduled offboarding): a move on ${body.effective_date} would come after their last day.`,
          {
            errors: [{ field: 'effective_date', message: `is after the user's scheduled last day (${lastDay})` }],
          },
        );
      }

      const email = user!.email.toLowerCase();
      // As offboarding: the directory is known now if its managed tenant is registered, else looked up when due.
      const tenant = await tenants.findByDomain(ownerTenantId, domainOf(email));
      return {
        userId: body.user_id,
        email,
        managedTenantId: tenant?.id ?? null,
        effectiveDate,
        department: body.department ?? null,
        managerId: body.manager_id ?? null,
        managerEmail: manager?.email.toLowerCase() ?? null,
        jobTitle: body.job_title ?? null,
        bundlesAdd: add,
        bundlesRemove: remove,
        ...(body.physical ? { physical: body.physical } : {}),
      };
    },

    openKey: (run) => `${run.userId} ${run.effectiveDate}`,
    openConflict: (run) =>
      conflict(`A move of user ${run.userId} on ${run.effectiveDate} is already scheduled or in progress.`, {
        errors: [{ field: 'effective_date', message: 'the user already has a move on this date' }],
      }),

    cancel: {
      refusal: (run) =>
        run.status === 'scheduled'
          ? null
          : `The move is ${run.status}: only a scheduled move, of which nothing has run yet, can be cancelled.`,
      detail: () => 'Cancelled before it was due.',
    },
  };
}
