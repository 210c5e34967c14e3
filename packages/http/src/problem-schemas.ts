import { Type, type TProperties } from '@sinclair/typebox';
import type { ResponseSpec } from './openapi';
import { PROBLEM_CONTENT_TYPE } from './problem';
import { named } from './schema-names';

/**
 * A 422 problem document (RFC 9457) with the extension members that say what rule broke, e.g.
 * `current_status` and `allowed_transitions` of an illegal status move. Every service documents
 * its business-rule failures with it.
 */
// Shown on the API reference pages when a route names no example of its own.
const GENERIC_EXAMPLE = {
  type: 'urn:msp:problem:unknown-reference',
  title: 'Unprocessable Content',
  status: 422,
  detail: 'client_id does not name a client of your tenant.',
  request_id: '0e45781e-5e6d-481c-a743-4ca9e0ce2fec',
  errors: [{ field: 'client_id', message: 'no such client' }],
};

export function businessRuleProblem<T extends TProperties>(
  name: string,
  extensions: T,
  description: string,
  example: Record<string, unknown> = GENERIC_EXAMPLE,
) {
  return named(
    name,
    Type.Object(
      {
        type: Type.String({ description: '`urn:msp:problem:<code>`.' }),
        title: Type.String(),
        status: Type.Literal(422),
        detail: Type.String(),
        request_id: Type.String(),
        errors: Type.Optional(
          Type.Array(Type.Object({ field: Type.String(), message: Type.String() }, { additionalProperties: false })),
        ),
        ...extensions,
      },
      { additionalProperties: true, description, examples: [example] },
    ),
  );
}

export const BusinessRuleProblem = businessRuleProblem(
  'BusinessRuleProblem',
  {},
  'RFC 9457 problem document: the request is well-formed but breaks a business rule; `errors` names the fields concerned.',
);

/** The 422 response of a route, described in its own words. */
export const unprocessableResponse = (
  description: string,
  schema: ResponseSpec['schema'] = BusinessRuleProblem,
): ResponseSpec => ({
  description,
  schema,
  contentType: PROBLEM_CONTENT_TYPE,
});
