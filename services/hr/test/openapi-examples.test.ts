import request from 'supertest';
import { testEveryOperationHasExamples } from '@msp/testkit';
import { startHr, type TestHr } from './support/hr';

// The API reference (/api/v1/docs) shows these examples; a new route without them fails here.
let hr: TestHr;
beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

testEveryOperationHasExamples(async () => (await request(hr.app).get('/api/v1/openapi.json').expect(200)).body);
