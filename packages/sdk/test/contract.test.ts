import { committedFiles, generatedFiles } from '../scripts/generated-files';
import { startStack } from '../scripts/stack';
import { lintWithSpectral } from './support/spectral';

// desk, link and hr as they ship (their built dist/, started as `pnpm start` does) and the OpenAPI
// document each serves at /api/v1/openapi.json.
let stack: Awaited<ReturnType<typeof startStack>>;
let documents: Awaited<ReturnType<Awaited<ReturnType<typeof startStack>>['documents']>>;

beforeAll(async () => {
  stack = await startStack();
  documents = await stack.documents();
}, 120_000);
afterAll(() => stack?.stop(), 30_000);

test('When the generated files are made again from the documents the services serve, then they are the committed ones', async () => {
  const fresh = await generatedFiles(documents);
  const committed = committedFiles();
  const stale = Object.keys({ ...fresh, ...committed })
    .filter((name) => fresh[name] !== committed[name])
    .sort();
  expect({ stale, fix: stale.length ? 'run `pnpm generate` and commit packages/sdk/src/generated' : 'none' }).toEqual({
    stale: [],
    fix: 'none',
  });
}, 60_000);

test("When Spectral lints the three served documents with its OpenAPI rules and OWASP's, then it finds nothing the ruleset does not waive", async () => {
  expect(await lintWithSpectral(documents)).toEqual([]);
}, 120_000);

test('When a document breaks the rules the ruleset keeps, then Spectral reports each: the ruleset is not a blanket waiver', async () => {
  const broken = JSON.parse(JSON.stringify(documents.desk));
  // A request field without its bound, a list response without rate-limit headers, a write
  // without security, a public read beside the waived well-known ones.
  delete broken.components.schemas.NewTicket.properties.title.maxLength;
  const list = broken.paths['/tickets'].get;
  for (const name of ['RateLimit', 'X-RateLimit-Limit']) delete list.responses['200'].headers[name];
  broken.paths['/tickets'].post.security = [];
  list.security = [];

  const found = (await lintWithSpectral({ broken })).map(({ severity, code, path }) => `${severity} ${code} ${path}`);

  expect(found).toEqual(
    expect.arrayContaining([
      'error owasp:api4:2023-string-limit components/schemas/NewTicket/properties/title',
      'error owasp:api4:2023-rate-limit paths//tickets/get/responses/200/headers',
      'error owasp:api2:2023-write-restricted paths//tickets/post/security',
      'warning owasp:api2:2023-read-restricted paths//tickets/get/security',
    ]),
  );
  // What a response sends is not what a caller sends: its unbounded text stays out of API4's rules.
  expect(found.filter((finding) => finding.includes('components/schemas/Ticket/'))).toEqual([]);
}, 120_000);
