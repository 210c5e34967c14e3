import { conflict, unprocessable } from '@msp/http';
import { activeDeskUser } from '../runs/desk-users';
import { domainOf } from '../runs/person-account';
import { runDate } from '../runs/run-dates';
import type { RunKind, RunKindDeps } from '../runs/run-kind';
import { moveJson } from './move.mapper';
import type { CreateMoveBody } from './move.schemas';
import { moveSteps, type MoveRecord, type NewMove } from './move.tasks';
import type { MoveChecksRepository } from './moves.repository';

const dateOnly = (date: Date) => date.toISOString().slice(0, 10);

/** A mover as a kind of run: its table, its checks, its steps. */
export function moveKind(deps: RunKindDeps<MoveRecord>, checks: MoveChecksRepository): RunKind<MoveRecord, CreateMoveBody, NewMove> {
  const { desk, tenants } = deps;
  return {
    name: 'move',
    table: {
      model: 'move',
      table: 'moves',
      taskKey: 'moveId',
      // One open move per user and effective date.
      openColumn: 'openKey',
      openIndex: 'moves_owner_tenant_id_open_key_key',
      columns: {
        userId: true,
        email: true,
        managedTenantId: true,
        effectiveDate: true,
        department: true,
        managerId: true,
        managerEmail: true,
        jobTitle: true,
        bundlesAdd: true,
        bundlesRemove: true,
        physical: true,
        directoryUserId: true,
      },
    },
    steps: moveSteps(deps),
    json: moveJson,

    async prepare(ownerTenantId, body, now) {
      const effectiveDate = runDate('effective_date', body.effective_date, now);
      const add = body.bundles.add ?? [];
      const remove = body.bundles.remove ?? [];
      const both = add.filter((name) => remove.includes(name));
      if (both.length) {
        throw unprocessable(`A group cannot be both added and removed: ${both.join(', ')}.`, { errors: [{ field: 'bundles.remove', message: `names a group also in bundles.add (${both.join(', ')})` }] });
      }
      const user = await activeDeskUser(desk, ownerTenantId, body.user_id);
      const manager = body.manager_id ? await activeDeskUser(desk, ownerTenantId, body.manager_id) : null;
      const errors = [
        ...(user ? [] : [{ field: 'user_id', message: 'does not name an active desk user of your tenant' }]),
        ...(body.manager_id && !manager ? [{ field: 'manager_id', message: 'does not name an active desk user of your tenant' }] : []),
      ];
      if (errors.length) throw unprocessable(`${errors.map((e) => e.field).join(' and ')} must name active desk users of your tenant.`, { errors });
      if (manager && manager.id === user!.id) {
        throw unprocessable('manager_id must be someone other than the moving user.', { errors: [{ field: 'manager_id', message: 'must differ from user_id' }] });
      }

      const lastDay = await checks.scheduledLastDay(ownerTenantId, body.user_id);
      if (lastDay && effectiveDate.getTime() > lastDay.getTime()) {
        throw unprocessable(`The user leaves on ${dateOnly(lastDay)} (a scheduled offboarding): a move on ${body.effective_date} would come after their last day.`, {
          errors: [{ field: 'effective_date', message: `is after the user's scheduled last day (${dateOnly(lastDay)})` }],
        });
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

    openKey: (run) => `${run.userId} ${dateOnly(run.effectiveDate)}`,
    openConflict: (run) =>
      conflict(`A move of user ${run.userId} on ${dateOnly(run.effectiveDate)} is already scheduled or in progress.`, {
        errors: [{ field: 'effective_date', message: 'the user already has a move on this date' }],
      }),

    cancel: {
      refusal: (run) => (run.status === 'scheduled' ? null : `The move is ${run.status}: only a scheduled move, of which nothing has run yet, can be cancelled.`),
      detail: () => 'Cancelled before it was due.',
    },
  };
}
