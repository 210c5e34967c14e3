import {
  API_BASE_PATH,
  IdParams,
  LINK_HEADER,
  LIST_PAGES_DOC,
  pageRequestOf,
  sendPage,
  unprocessableResponse,
  type ApiRouter,
} from '@msp/http';
import { tenantOf } from '@msp/auth';
import { contractJson } from './contract.mapper';
import {
  Contract,
  ContractPage,
  ContractRuleProblem,
  CreateContractBody,
  ListContractsQuery,
} from './contract.schemas';
import type { ContractsService } from './contracts.service';
import { DEFAULT_TIME_ZONE } from '../calendar';

const TAGS = ['Employees'];

export function registerContractRoutes(api: ApiRouter, deps: { contracts: ContractsService }) {
  const { contracts } = deps;

  api.route({
    method: 'get',
    path: '/employees/:id/contracts',
    operationId: 'listContracts',
    summary: "List an employee's contracts",
    description:
      "The contract history of the employee, latest `valid_from` first. Each contract holds until the day before the next one's `valid_from`." +
      LIST_PAGES_DOC,
    tags: TAGS,
    scope: 'read:hr',
    params: IdParams,
    query: ListContractsQuery,
    responses: { 200: { description: 'One page of contracts.', schema: ContractPage, headers: LINK_HEADER } },
    handler: async (req, res, { params, query }) => {
      const page = pageRequestOf(query);
      const { items, total } = await contracts.list(tenantOf(req), params.id, page);
      sendPage(req, res, items.map(contractJson), total, page);
    },
  });

  api.route({
    method: 'post',
    path: '/employees/:id/contracts',
    operationId: 'createContract',
    summary: 'Add a contract',
    description:
      "Adds a contract from `valid_from` on; the previous one ends the day before. Leave counts the contract's `working_days` minus the public holidays " +
      'of its `state`, and the leave account spreads `vacation_days_per_year` over the days each contract holds. `vacation_days_per_year` below the ' +
      'minimum of §3 BUrlG (24 working days on six days a week: 4 × the working days a week) is a 422 whose `minimum` names it; a second contract ' +
      'with the same `valid_from` is a 409. With `opening_balance_minutes` the overtime account (`GET /employees/{id}/time-account`) starts afresh on ' +
      "the contract's `valid_from` from that balance: the days before it no longer count for the months from then on. `time_zone` (an IANA zone, " +
      "default `Europe/Berlin`; an unknown one is a 400) is the zone whose local times the employee's timesheets record while the contract holds.",
    tags: TAGS,
    scope: 'write:hr',
    params: IdParams,
    body: CreateContractBody,
    errors: [409],
    responses: {
      201: {
        description: "Added; `Location` names the employee's contracts.",
        schema: Contract,
        headers: { Location: { description: "URL of the employee's contracts.", schema: { type: 'string' } } },
      },
      422: unprocessableResponse(
        '`vacation_days_per_year` is below the legal minimum (§3 BUrlG); `minimum` names it.',
        ContractRuleProblem,
      ),
    },
    handler: async (req, res, { params, body }) => {
      const contract = await contracts.add(tenantOf(req), params.id, {
        validFrom: body.valid_from,
        weeklyMinutes: body.weekly_minutes,
        workingDays: body.working_days,
        vacationDaysPerYear: body.vacation_days_per_year,
        state: body.state,
        openingBalanceMinutes: body.opening_balance_minutes ?? null,
        timeZone: body.time_zone ?? DEFAULT_TIME_ZONE,
      });
      res.status(201).location(`${API_BASE_PATH}/employees/${params.id}/contracts`).json(contractJson(contract));
    },
  });
}
