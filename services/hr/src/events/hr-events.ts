// The events hr emits: what its webhooks may subscribe to, and what its audit log holds. Each is
// recorded by the services (`hrEvents.record`) in the transaction of the change it describes.
import { eventCatalogue } from '@msp/events';
import { Contract } from '../contracts/contract.schemas';
import { LeaveAdjustment } from '../leave-accounts/leave-account.schemas';
import { LeaveSettings } from '../leave-settings/leave-settings.schemas';
import { Leave } from '../leaves/leave.schemas';
import { Timesheet } from '../timesheets/timesheet.schemas';

export const hrEvents = eventCatalogue([
  { type: 'timesheet.created', summary: 'A working day was recorded.', object: Timesheet },
  {
    type: 'timesheet.updated',
    summary:
      "A working day's entries were replaced, or only its `warnings` changed because a neighbouring day was recorded, changed or deleted " +
      '(§4 ArbZG blocks over midnight, §5 rest); `changes` has the entries, totals and warnings that differ.',
    object: Timesheet,
    changes: true,
  },
  {
    type: 'timesheet.deleted',
    summary: 'A working day was deleted; `object` is the sheet as it was.',
    object: Timesheet,
  },
  { type: 'leave.requested', summary: 'A leave was requested (it starts `requested`).', object: Leave },
  {
    type: 'leave.approved',
    summary: 'A requested leave was approved; `changes.status` is `{from, to}`.',
    object: Leave,
    changes: true,
  },
  {
    type: 'leave.rejected',
    summary: 'A requested leave was rejected; `changes.status` is `{from, to}`.',
    object: Leave,
    changes: true,
  },
  {
    type: 'leave.cancelled',
    summary: 'A requested or approved leave was cancelled; `changes.status` is `{from, to}`.',
    object: Leave,
    changes: true,
  },
  { type: 'contract.created', summary: "A contract was added to an employee's history.", object: Contract },
  {
    type: 'leave_adjustment.created',
    summary: "A year's leave account was adjusted (collective agreement, correction).",
    object: LeaveAdjustment,
  },
  {
    type: 'leave_settings.updated',
    summary: "The tenant's leave settings were replaced; `changes` has the fields that differ.",
    object: LeaveSettings,
    changes: true,
  },
]);
