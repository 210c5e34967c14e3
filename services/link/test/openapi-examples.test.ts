import request from 'supertest';
import { testEveryOperationHasExamples } from '@msp/testkit';
import { startLink, type TestLink } from './support/link';

// The API reference (/api/v1/docs) shows these examples; a new route without them fails here.
let link: TestLink;
beforeAll(async () => {
  link = await startLink();
});
afterAll(() => link.close());

testEveryOperationHasExamples(async () => (await request(link.app).get('/api/v1/openapi.json').expect(200)).body);
