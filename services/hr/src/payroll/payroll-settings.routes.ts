import type { ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { PayrollSettings, PutPayrollSettingsBody, type PayrollSettingsJson } from './payroll-settings.schemas';
import type { PayrollSettingsRecord } from './payroll-settings.repository';
import type { PayrollSettingsService } from './payroll-settings.service';

const TAGS = ['Payroll'];

function toJson(settings: PayrollSettingsRecord): PayrollSettingsJson {
  return {
    datev: { consultant_number: settings.consultantNumber, client_number: settings.clientNumber },
    wage_types: { ...settings.wageTypes },
    bs_nr: { ...settings.bsNumbers },
  };
}

export function registerPayrollSettingsRoutes(api: ApiRouter, deps: { settings: PayrollSettingsService }) {
  const { settings } = deps;

  api.route({
    method: 'get',
    path: '/payroll/settings',
    operationId: 'getPayrollSettings',
    summary: 'Show the payroll settings',
    description:
      'The DATEV numbers, and the Lohnart and Bearbeitungsschlüssel (`bs_nr`) of every category your payroll export uses. Until your tenant saves its own, ' +
      'the wage types are the documented defaults (`normal` 1000, `overtime` 1100, `on_call` 1200, `travel` 1300, `training` 1400, `standby` 1250, ' +
      '`vacation` 1500, `sick` 1600, `unpaid` 1700, `parental` 1800, `special` 1900), `bs_nr` is 1 (hours) for the timesheet categories and 2 (days) ' +
      'for the leave types, and both DATEV numbers are `null`.',
    tags: TAGS,
    scope: 'read:payroll',
    responses: { 200: { description: 'The settings in effect.', schema: PayrollSettings } },
    load: async (req) => toJson(await settings.get(tenantOf(req))),
  });

  api.route({
    method: 'put',
    path: '/payroll/settings',
    operationId: 'replacePayrollSettings',
    summary: 'Replace the payroll settings',
    description:
      'A full replace: `datev` with both numbers (`null` clears one) and `wage_types` with every category are required, except `wage_types.standby` ' +
      '(added later; left out, it is its default). `bs_nr` is optional, and so is each category in it: what is left out gets its default (1 for hours, ' +
      '2 for days). A `bs_nr` that is not a positive integer, or a missing or unknown field, is a 400 and changes nothing. ' +
      'Needs both `write:hr` and `read:payroll`, since whoever changes the mapping decides what the export contains.',
    tags: TAGS,
    scope: 'write:hr read:payroll',
    body: PutPayrollSettingsBody,
    responses: { 200: { description: 'The settings as stored.', schema: PayrollSettings } },
    handler: async (req, res, { body }) => {
      const stored = await settings.replace(tenantOf(req), {
        consultantNumber: body.datev.consultant_number,
        clientNumber: body.datev.client_number,
        wageTypes: body.wage_types,
        bsNumbers: body.bs_nr,
      });
      res.json(toJson(stored));
    },
  });
}
