import { Type, type StringOptions, type TProperties } from '@sinclair/typebox';
import { API_BASE_PATH, LINK_HEADER, PROBLEM_CONTENT_TYPE, named, type ResponseSpec } from '@msp/http';
import type { Response } from 'express';

/** The `Location` of a 201: the new resource's URL. */
export const LOCATION_HEADER = {
  Location: { description: 'URL of the created resource.', schema: { type: 'string', format: 'uri-reference' } },
};

export const created = (description: string, schema: ResponseSpec['schema']): ResponseSpec => ({ description, schema, headers: LOCATION_HEADER });
export const page = (description: string, schema: ResponseSpec['schema']): ResponseSpec => ({ description, schema, headers: LINK_HEADER });

/** Answers 201 with the resource and its Location. */
export function sendCreated(res: Response, path: string, body: { id: string }) {
  res.status(201).location(`${API_BASE_PATH}${path}/${body.id}`).json(body);
}

/** A 422 problem document (RFC 9457) with the extension members that say what rule broke. */
export function businessRuleProblem<T extends TProperties>(name: string, extensions: T, description: string) {
  return named(
    name,
    Type.Object(
      {
        type: Type.String({ description: '`urn:msp:problem:<code>`.' }),
        title: Type.String(),
        status: Type.Literal(422),
        detail: Type.String(),
        request_id: Type.String(),
        errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }, { additionalProperties: false }))),
        ...extensions,
      },
      { additionalProperties: true, description },
    ),
  );
}

export const BusinessRuleProblem = businessRuleProblem(
  'BusinessRuleProblem',
  {},
  'RFC 9457 problem document: the request is well-formed but breaks a business rule; `errors` names the fields concerned.',
);

export const unprocessableResponse = (description: string, schema: ResponseSpec['schema'] = BusinessRuleProblem): ResponseSpec => ({
  description,
  schema,
  contentType: PROBLEM_CONTENT_TYPE,
});

/** Free text fields: long enough for a pasted log, short enough to keep a page of them small. */
export const LONG_TEXT_MAX = 10_000;
export const NAME_MAX = 200;
export const EMAIL_MAX = 254; // RFC 5321's path limit

/**
 * Text a caller sends. PostgreSQL cannot store the NUL character: it is refused here as a 400
 * instead of failing in the database as a 500.
 */
export const Text = (options: StringOptions = {}) => Type.String({ pattern: '^[^\\u0000]*$', ...options });
