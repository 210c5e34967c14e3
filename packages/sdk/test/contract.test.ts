import { committedFiles, generatedFiles } from '../scripts/generated-files';
import { startStack } from '../scripts/stack';

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
  expect({ stale, fix: stale.length ? 'run `pnpm generate` and commit packages/sdk/src/generated' : 'none' }).toEqual({ stale: [], fix: 'none' });
}, 60_000);
