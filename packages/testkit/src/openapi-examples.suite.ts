// An OpenAPI document as parsed JSON: walked by key, so loosely typed on purpose.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** The schema a `$ref` into components points at (one document, local refs only). */
function resolve(document: Json, schema: Json | undefined): Json | undefined {
  let current = schema;
  for (let hops = 0; current?.$ref && hops < 10; hops++) {
    const match = /^#\/components\/schemas\/(.+)$/.exec(current.$ref as string);
    current = match ? document.components?.schemas?.[match[1]!] : undefined;
  }
  return current;
}

/** A response, or the shared one a `$ref` into components.responses points at. */
function resolveResponse(document: Json, response: Json): Json | undefined {
  const match = typeof response.$ref === 'string' ? /^#\/components\/responses\/(.+)$/.exec(response.$ref) : null;
  return match ? document.components?.responses?.[match[1]!] : response;
}

function hasExample(document: Json, media: Json): boolean {
  if (media.example !== undefined || (media.examples && Object.keys(media.examples).length)) return true;
  const schema = resolve(document, media.schema);
  return Boolean(
    schema && ((Array.isArray(schema.examples) && schema.examples.length > 0) || schema.example !== undefined),
  );
}

/**
 * Every request body and every JSON response (errors included) of the document, named where it has
 * no example (the media type's `example(s)` or the schema's `examples`): the API reference shows
 * that example, or otherwise placeholders such as "string".
 */
export function operationsLackingExamples(document: Json): string[] {
  const lacking: string[] = [];
  for (const [path, methods] of Object.entries<Json>(document.paths ?? {})) {
    for (const [method, operation] of Object.entries<Json>(methods)) {
      const name = `${method.toUpperCase()} ${path} (${operation.operationId})`;
      for (const [type, media] of Object.entries<Json>(operation.requestBody?.content ?? {})) {
        if (!hasExample(document, media)) lacking.push(`${name}: request body ${type}`);
      }
      for (const [status, ref] of Object.entries<Json>(operation.responses ?? {})) {
        const response = resolveResponse(document, ref);
        for (const [type, media] of Object.entries<Json>(response?.content ?? {})) {
          if (/json/.test(type) && !hasExample(document, media)) lacking.push(`${name}: ${status} response ${type}`);
        }
      }
    }
  }
  return lacking;
}

/** The test each service runs on its own document: the reference page has an example for everything. */
export function testEveryOperationHasExamples(document: () => Json | Promise<Json>) {
  test('When the OpenAPI document is read, then every request body and every JSON response has an example', async () => {
    expect(operationsLackingExamples(await document())).toEqual([]);
  });
}
