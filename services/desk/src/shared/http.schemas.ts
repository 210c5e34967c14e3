import { Type, type StringOptions } from '@sinclair/typebox';
import { API_BASE_PATH, LINK_HEADER, type ResponseSpec } from '@msp/http';
import type { Response } from 'express';

/** The `Location` of a 201: the new resource's URL. */
export const LOCATION_HEADER = {
  Location: { description: 'URL of the created resource.', schema: { type: 'string', format: 'uri-reference' } },
};

export const created = (description: string, schema: ResponseSpec['schema']): ResponseSpec => ({
  description,
  schema,
  headers: LOCATION_HEADER,
});
export const page = (description: string, schema: ResponseSpec['schema']): ResponseSpec => ({
  description,
  schema,
  headers: LINK_HEADER,
});

/** Answers 201 with the resource and its Location. */
export function sendCreated(res: Response, path: string, body: { id: string }) {
  res.status(201).location(`${API_BASE_PATH}${path}/${body.id}`).json(body);
}

// The 422 problem schemas are shared by every service.
export { businessRuleProblem, BusinessRuleProblem, unprocessableResponse } from '@msp/http';

/** Free text fields: long enough for a pasted log, short enough to keep a page of them small. */
export const LONG_TEXT_MAX = 10_000;
export const NAME_MAX = 200;
export const EMAIL_MAX = 254; // RFC 5321's path limit

/**
 * Text a caller sends. PostgreSQL cannot store the NUL character: it is refused here as a 400
 * instead of failing in the database as a 500.
 */
export const Text = (options: StringOptions = {}) => Type.String({ pattern: '^[^\\u0000]*$', ...options });
