/* eslint-disable @typescript-eslint/no-explicit-any -- an OpenAPI document walked by JSON pointer: its nodes have no static type */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';

// A response is checked against the service's own OpenAPI document: its
// status must be documented for the operation, its content type must be one the operation
// declares, and its body must validate against the declared schema. A route that answers
// something its document does not say fails whatever test called it.

const API_BASE = '/api/v1';
/** Served beside the document, not described by it. */
const UNDOCUMENTED = new Set([`${API_BASE}/openapi.json`, `${API_BASE}/docs`]);
const DOCUMENT_ID = 'https://service.test/openapi.json';

interface Route {
  template: string;
  pattern: RegExp;
  literal: number;
}

export interface Checker {
  check(method: string, url: string, response: Response): void;
}

const pointer = (...segments: string[]) => segments.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export function createConformanceChecker(document: Record<string, any>): Checker {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  const validators = new Map<string, ValidateFunction>();
  const validatorFor = (ref: string) => {
    let validate = validators.get(ref);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/${ref}` });
      validators.set(ref, validate);
    }
    return validate;
  };

  // Literal paths win over templated ones (`/.well-known/jwks.json` over `/x/{id}`).
  const routes: Route[] = Object.keys(document.paths)
    .map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
      literal: template.replace(/\{[^}]+\}/g, '').length,
    }))
    .sort((a, b) => b.literal - a.literal);

  function resolveResponse(operationPointer: string, status: number): { pointer: string; body: any } | undefined {
    const operation = ajv.getSchema(`${DOCUMENT_ID}#/${operationPointer}`)?.schema as any;
    let entry = operation?.responses?.[String(status)];
    let at = `${operationPointer}/${pointer('responses', String(status))}`;
    if (entry?.$ref) {
      at = entry.$ref.replace(/^#\//, '');
      entry = at.split('/').reduce((node: any, key: string) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    }
    return entry ? { pointer: at, body: entry } : undefined;
  }

  function fail(method: string, url: string, response: Response, why: string): never {
    throw new Error(`OpenAPI conformance: ${method.toUpperCase()} ${url} answered ${response.status}: ${why}\nbody: ${JSON.stringify(response.body)?.slice(0, 500)}`);
  }

  return {
    check(method, url, response) {
      const path = new URL(url, 'http://x').pathname;
      if (!path.startsWith(`${API_BASE}/`) || UNDOCUMENTED.has(path)) return;
      const relative = path.slice(API_BASE.length);
      const route = routes.find((r) => r.pattern.test(relative) && document.paths[r.template][method]);
      let responsePointer: string;
      let declared: any;
      if (route) {
        const resolved = resolveResponse(pointer('paths', route.template, method), response.status);
        if (!resolved) fail(method, url, response, `status ${response.status} is not documented for ${method.toUpperCase()} ${route.template}`);
        ({ pointer: responsePointer, body: declared } = resolved);
      } else {
        // No operation: the answer must be the documented 404 problem.
        if (response.status !== 404) fail(method, url, response, 'no documented operation, and the answer is not a 404');
        responsePointer = pointer('components', 'responses', 'Error404');
        declared = document.components.responses.Error404;
      }

      const contentType = (response.headers['content-type'] ?? '').split(';')[0]!.trim();
      const content = declared.content as Record<string, { schema?: unknown }> | undefined;
      if (!content) {
        if (response.text) fail(method, url, response, 'a body was sent where the document declares none');
        return;
      }
      if (!(contentType in content)) fail(method, url, response, `content type "${contentType}" is not one of ${Object.keys(content).join(', ')}`);
      if (!content[contentType]!.schema) return;
      const validate = validatorFor(`${responsePointer}/${pointer('content', contentType, 'schema')}`);
      // supertest parses JSON bodies only; any other declared type (CSV, DATEV text) is its text.
      const body = /json/.test(contentType) ? response.body : response.text;
      if (!validate(body)) fail(method, url, response, `the body does not match the schema: ${ajv.errorsText(validate.errors)}`);
    },
  };
}
