import type { ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { leaveSettingsJson } from './leave-settings.mapper';
import { LeaveSettings, PutLeaveSettingsBody } from './leave-settings.schemas';
import type { LeaveSettingsService } from './leave-settings.service';

const TAGS = ['Leaves'];

export function registerLeaveSettingsRoutes(api: ApiRouter, deps: { settings: LeaveSettingsService }) {
  const { settings } = deps;

  api.route({
    method: 'get',
    path: '/leave/settings',
    operationId: 'getLeaveSettings',
    summary: 'Show the leave settings',
    description:
      'When carried-over leave expires (default `03-31`, §7 (3) BUrlG) and whether vacation may exceed the days left (default `false`).',
    tags: TAGS,
    scope: 'read:hr',
    responses: { 200: { description: 'The settings in effect.', schema: LeaveSettings } },
    load: async (req) => leaveSettingsJson(await settings.get(tenantOf(req))),
  });

  api.route({
    method: 'put',
    path: '/leave/settings',
    operationId: 'replaceLeaveSettings',
    summary: 'Replace the leave settings',
    description:
      'A full replace: `carry_over_expiry` (`MM-DD`) and `allow_negative_balance` are both required. Needs `admin:tenant`: the rules apply to every ' +
      "employee's leave account. Records a `leave_settings.updated` event.",
    tags: TAGS,
    scope: 'admin:tenant',
    body: PutLeaveSettingsBody,
    responses: { 200: { description: 'The settings as stored.', schema: LeaveSettings } },
    handler: async (req, res, { body }) => {
      const stored = await settings.replace(tenantOf(req), {
        carryOverExpiry: body.carry_over_expiry,
        allowNegativeBalance: body.allow_negative_balance,
      });
      res.json(leaveSettingsJson(stored));
    },
  });
}
