import { Type } from '@sinclair/typebox';
import { buildOpenApiDocument, named } from '../src';
import { patternMaxLength, withImpliedBounds } from '../src/openapi-bounds';
import { compileValidator } from '../src/validation';

describe('The longest match of an anchored pattern', () => {
  test.each([
    ['^[0-9]{1,4}$', 4],
    ['^[0-9]{4,7}$', 7],
    ['^[0-9]{2}$', 2],
    ['^[a-z]?x$', 2],
    ['^\\d{3}-\\d{4}$', 8],
    ['^(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)$', 5],
    ['^(?!0000)\\d{4}-(?:0[1-9]|1[0-2])$', 7],
    ['^[\\]a-]{3}$', 3],
  ])('When the pattern is %s, then its longest match is %s characters', (pattern, longest) => {
    expect(patternMaxLength(pattern)).toBe(longest);
    const match = new RegExp(pattern, 'u');
    expect(match.test('x'.repeat(longest + 1))).toBe(false);
  });

  test.each([
    ['[0-9]{1,4}', 'no anchors'],
    ['^[0-9]+$', 'a plus'],
    ['^[^\\u0000]*$', 'a star'],
    ['^[0-9]{2,}$', 'an open repeat'],
    ['^a|bb$', 'alternatives that each hold one anchor only'],
    ['^https?://', 'no end anchor'],
    ['^(a)\\1$', 'a back-reference'],
    ['^(?<year>\\d{4})$', 'a named group'],
  ])('When the pattern %s has %s, then it has no longest match', (pattern) => {
    expect(patternMaxLength(pattern)).toBeUndefined();
  });
});

describe('The bounds a schema implies', () => {
  test('When a string has a format of fixed length or an anchored pattern, then the document gives its maxLength', () => {
    expect(withImpliedBounds({ type: 'string', format: 'uuid' })).toEqual({
      type: 'string',
      format: 'uuid',
      maxLength: 36,
    });
    expect(withImpliedBounds({ type: 'string', format: 'date' })).toEqual({
      type: 'string',
      format: 'date',
      maxLength: 10,
    });
    expect(withImpliedBounds({ type: 'string', pattern: '^[0-9]{1,5}$' })).toEqual({
      type: 'string',
      pattern: '^[0-9]{1,5}$',
      maxLength: 5,
    });
  });

  test('When a string has its own maxLength, a list of values or no bound at all, then it stays as it is', () => {
    for (const schema of [
      { type: 'string', format: 'uuid', maxLength: 40 },
      { type: 'string', enum: ['a', 'b'] },
      { type: 'string', format: 'date-time' },
      { type: 'string', pattern: '^[0-9]+$' },
      { type: 'string' },
    ]) {
      expect(withImpliedBounds(schema)).toEqual(schema);
    }
  });

  test('When an integer is read, then its format says whether its range fits 32 bits', () => {
    expect(withImpliedBounds({ type: 'integer', minimum: 1, maximum: 100 })).toMatchObject({ format: 'int32' });
    expect(withImpliedBounds({ type: 'integer', minimum: 0 })).toMatchObject({ format: 'int64' });
    expect(withImpliedBounds({ type: 'integer', minimum: 0, maximum: 2 ** 31 })).toMatchObject({ format: 'int64' });
    expect(withImpliedBounds({ type: 'integer', format: 'int64', minimum: 0, maximum: 1 })).toMatchObject({
      format: 'int64',
    });
  });

  test('When an array holds each of a list of values once, then it holds at most as many items as the list', () => {
    const scopes = { type: 'array', uniqueItems: true, items: { type: 'string', enum: ['a', 'b', 'c'] } };
    expect(withImpliedBounds(scopes)).toEqual({ ...scopes, maxItems: 3 });
    expect(withImpliedBounds({ ...scopes, uniqueItems: false })).toEqual({ ...scopes, uniqueItems: false });
  });
});

describe('The document built from the schemas', () => {
  const Thing = named(
    'Thing',
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      code: Type.String({ pattern: '^[0-9]{1,4}$', examples: [{ type: 'string' }] }),
      count: Type.Integer({ minimum: 0, maximum: 10, default: 1 }),
      properties: Type.Optional(Type.String({ format: 'date' })),
    }),
  );
  const document = buildOpenApiDocument(
    {
      title: 'Things',
      version: '1',
      description: 'Things.',
      tokenUrl: 'http://localhost/api/v1/auth/token',
      scopes: { 'read:things': 'Read things' },
    },
    '/api/v1',
    [
      {
        method: 'get',
        path: '/things/:id',
        operationId: 'getThing',
        summary: 'Show a thing',
        tags: ['Things'],
        scope: 'admin:tenant',
        responses: { 200: { description: 'The thing.', schema: Thing } },
        errors: [404],
      },
      {
        method: 'post',
        path: '/things',
        operationId: 'createThing',
        summary: 'Create a thing',
        tags: ['Things'],
        scope: 'read:things',
        body: Thing,
        responses: { 201: { description: 'Created.', schema: Thing } },
        errors: [400, 429],
      },
    ],
  ) as unknown as Record<string, any>;

  test('When it is built, then each schema states its implied bounds and its data keywords are copied untouched', () => {
    expect(document.components.schemas.Thing.properties).toEqual({
      id: { type: 'string', format: 'uuid', maxLength: 36 },
      code: { type: 'string', pattern: '^[0-9]{1,4}$', maxLength: 4, examples: [{ type: 'string' }] },
      count: { type: 'integer', minimum: 0, maximum: 10, default: 1, format: 'int32' },
      properties: { type: 'string', format: 'date', maxLength: 10 },
    });
  });

  test('When it is built, then the validator keeps the schema as it was: a long code is one error, not two', () => {
    expect(Thing.properties.code).not.toHaveProperty('maxLength');
    const validate = compileValidator(Thing, 'body');
    validate({ id: '7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70', code: '123456', count: 1 });
    expect(validate.errors?.map((error) => error.keyword)).toEqual(['pattern']);
  });

  test('When a response is documented, then it may carry the CORS header, and a 429 says when to retry', () => {
    const created = document.paths['/things'].post.responses['201'];
    expect(created.headers['Access-Control-Allow-Origin']).toEqual({
      $ref: '#/components/headers/Access-Control-Allow-Origin',
    });
    expect(document.components.headers['Access-Control-Allow-Origin'].description).toMatch(/API_CORS_ORIGINS/);
    expect(document.components.responses.Error429.headers['Retry-After'].schema).toEqual({
      type: 'integer',
      format: 'int32',
      minimum: 0,
    });
    expect(document.components.responses.Error400.headers['Access-Control-Allow-Origin']).toBeDefined();
  });

  test('When the security scheme is read, then it names the refresh URL and the JWT practices it follows', () => {
    const scheme = document.components.securitySchemes.oauth2;
    expect(scheme.flows.clientCredentials).toMatchObject({
      tokenUrl: 'http://localhost/api/v1/auth/token',
      refreshUrl: 'http://localhost/api/v1/auth/token',
    });
    expect(scheme.description).toContain('RFC8725');
  });

  test('When an operation needs admin:tenant alone, then its description names the scope once', () => {
    expect(document.paths['/things/{id}'].get.description).toBe('Requires scope `admin:tenant`.');
    expect(document.paths['/things'].post.description).toBe('Requires scope `read:things` (or `admin:tenant`).');
  });
});
