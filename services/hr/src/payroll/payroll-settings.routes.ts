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
      'The DATEV numbers and the Lohnart of every category your payroll export uses. Until your tenant saves its own, the wage types are the documented ' +
      'defaults (`normal` 1000, `overtime` 1100, `on_call` 1200, `travel` 1300, `training` 1400, `vacation` 1500, `sick` 1600, `unpaid` 1700, ' +
      '`parental` 1800, `special` 1900) and both DATEV numbers are `null`.',
    tags: TAGS,
    scope: 'read:payroll',
    responses: { 200: { description: 'The settings in effect.', schema: PayrollSettings } },
    handler: async (req, res) => {
      res.json(toJson(await settings.get(tenantOf(req))));
    },
  });

  api.route({
    method: 'put',
    path: '/payroll/settings',
    operationId: 'replacePayrollSettings',
    summary: 'Replace the payroll settings',
    description:
      'A full replace: `datev` with both numbers (`null` clears one) and `wage_types` with all ten categories are required; a missing or unknown field ' +
      'is a 400 and changes nothing. Needs both `write:hr` and `read:payroll`, since whoever changes the mapping decides what the export contains.',
    tags: TAGS,
    scope: 'write:hr read:payroll',
    body: PutPayrollSettingsBody,
    responses: { 200: { description: 'The settings as stored.', schema: PayrollSettings } },
    handler: async (req, res, { body }) => {
      const stored = await settings.replace(tenantOf(req), {
        consultantNumber: body.datev.consultant_number,
        clientNumber: body.datev.client_number,
        wageTypes: body.wage_types,
      });
      res.json(toJson(stored));
    },
  });
}
