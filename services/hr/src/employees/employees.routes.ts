import { API_BASE_PATH, IdParams, LINK_HEADER, sendPage, type ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { CreateEmployeeBody, Employee, EmployeePage, ListEmployeesQuery, UpdateEmployeeBody, type EmployeeJson } from './employee.schemas';
import type { EmployeeRecord } from './employees.repository';
import type { EmployeesService } from './employees.service';

const TAGS = ['Employees'];

function toJson(employee: EmployeeRecord): EmployeeJson {
  return {
    id: employee.id,
    user_id: employee.userId,
    personnel_number: employee.personnelNumber,
    name: employee.name,
    created_at: employee.createdAt.toISOString(),
    updated_at: employee.updatedAt.toISOString(),
  };
}

export function registerEmployeeRoutes(api: ApiRouter, deps: { employees: EmployeesService }) {
  const { employees } = deps;

  api.route({
    method: 'get',
    path: '/employees',
    operationId: 'listEmployees',
    summary: 'List employees',
    description: 'The employees of your tenant, newest first (`created_at` descending, then `id`).',
    tags: TAGS,
    scope: 'read:hr',
    query: ListEmployeesQuery,
    responses: { 200: { description: 'One page of employees.', schema: EmployeePage, headers: LINK_HEADER } },
    handler: async (req, res, { query }) => {
      const page = { page: query.page, per_page: query.per_page };
      const filter = { userId: query.user_id, personnelNumber: query.personnel_number };
      const { items, total } = await employees.list(tenantOf(req), filter, page);
      sendPage(req, res, items.map(toJson), total, page);
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
    handler: async (req, res, { params }) => {
      res.json(toJson(await employees.get(tenantOf(req), params.id)));
    },
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
      201: {
        description: 'Registered; `Location` names the new employee.',
        schema: Employee,
        headers: { Location: { description: 'URL of the new employee.', schema: { type: 'string' } } },
      },
    },
    handler: async (req, res, { body }) => {
      const employee = await employees.register(tenantOf(req), { userId: body.user_id, personnelNumber: body.personnel_number, name: body.name });
      res.status(201).location(`${API_BASE_PATH}/employees/${employee.id}`).json(toJson(employee));
    },
  });

  api.route({
    method: 'patch',
    path: '/employees/:id',
    operationId: 'updateEmployee',
    summary: 'Change an employee',
    description: 'Changes `name` and/or `personnel_number`; fields left out keep their value. A personnel number already used in your tenant is a 409.',
    tags: TAGS,
    scope: 'write:hr',
    params: IdParams,
    body: UpdateEmployeeBody,
    errors: [409],
    responses: { 200: { description: 'The changed employee.', schema: Employee } },
    handler: async (req, res, { params, body }) => {
      const employee = await employees.change(tenantOf(req), params.id, { name: body.name, personnelNumber: body.personnel_number });
      res.json(toJson(employee));
    },
  });
}
