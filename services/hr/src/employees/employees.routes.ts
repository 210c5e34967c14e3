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
import { employeeJson } from './employee.mapper';
import { CreateEmployeeBody, Employee, EmployeePage, ListEmployeesQuery, UpdateEmployeeBody } from './employee.schemas';
import type { EmployeesService } from './employees.service';

const TAGS = ['Employees'];

export function registerEmployeeRoutes(api: ApiRouter, deps: { employees: EmployeesService }) {
  const { employees } = deps;

  api.route({
    method: 'get',
    path: '/employees',
    operationId: 'listEmployees',
    summary: 'List employees',
    description: 'The employees of your tenant, newest first (`created_at` descending, then `id`).' + LIST_PAGES_DOC,
    tags: TAGS,
    scope: 'read:hr',
    query: ListEmployeesQuery,
    responses: { 200: { description: 'One page of employees.', schema: EmployeePage, headers: LINK_HEADER } },
    handler: async (req, res, { query }) => {
      const page = pageRequestOf(query);
      const filter = { userId: query.user_id, personnelNumber: query.personnel_number };
      const { items, total } = await employees.list(tenantOf(req), filter, page);
      sendPage(req, res, items.map(employeeJson), total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/employees/:id',
    operationId: 'getEmployee',
    summary: 'Show an employee',
    tags: TAGS,
    scope: 'read:hr',
    params: IdParams,
    responses: { 200: { description: 'The employee.', schema: Employee } },
    load: async (req, { params }) => employeeJson(await employees.get(tenantOf(req), params.id)),
  });

  api.route({
    method: 'post',
    path: '/employees',
    operationId: 'createEmployee',
    summary: 'Register an employee',
    description:
      'Links a helpdesk user to the number the payroll software knows them by. `user_id` is stored as given (hr does not look it up in the helpdesk). ' +
      'Both `user_id` and `personnel_number` are unique in your tenant: a second use of either is a 409 naming the field in `errors`.',
    tags: TAGS,
    scope: 'write:hr',
    body: CreateEmployeeBody,
    errors: [409],
    responses: {
      422: unprocessableResponse('`employment.end_date` is before `employment.start_date`.'),
      201: {
        description: 'Registered; `Location` names the new employee.',
        schema: Employee,
        headers: { Location: { description: 'URL of the new employee.', schema: { type: 'string' } } },
      },
    },
    handler: async (req, res, { body }) => {
      const employee = await employees.register(tenantOf(req), {
        userId: body.user_id,
        personnelNumber: body.personnel_number,
        name: body.name,
        employmentStart: body.employment?.start_date,
        employmentEnd: body.employment?.end_date,
      });
      res.status(201).location(`${API_BASE_PATH}/employees/${employee.id}`).json(employeeJson(employee));
    },
  });

  api.route({
    method: 'patch',
    path: '/employees/:id',
    operationId: 'updateEmployee',
    summary: 'Change an employee',
    description:
      'Changes `name`, `personnel_number` and/or `employment` (`start_date`, `end_date`); fields left out keep their value. A personnel number already used ' +
      'in your tenant is a 409; an `end_date` before the `start_date` a 422. Leave entitlement follows the employment: the waiting period of §4 BUrlG ' +
      'runs from `start_date`, and a year of entry or exit may give only 1/12 per full month (§5 BUrlG, see the leave account).',
    tags: TAGS,
    scope: 'write:hr',
    params: IdParams,
    body: UpdateEmployeeBody,
    errors: [409],
    responses: {
      200: { description: 'The changed employee.', schema: Employee },
      422: unprocessableResponse('`employment.end_date` is before `employment.start_date`.'),
    },
    handler: async (req, res, { params, body }) => {
      const employee = await employees.change(tenantOf(req), params.id, {
        name: body.name,
        personnelNumber: body.personnel_number,
        employmentStart: body.employment?.start_date,
        employmentEnd: body.employment?.end_date,
      });
      res.json(employeeJson(employee));
    },
  });
}
