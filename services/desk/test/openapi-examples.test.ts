import request from 'supertest';
import { testEveryOperationHasExamples } from '@msp/testkit';
import { startDesk, type TestDesk } from './support/desk';

// The API reference (/api/v1/docs) shows these examples; a new route without them fails here.
let desk: TestDesk;
beforeAll(async () => {
  desk = await startDesk();
});
afterAll(() => desk.close());

testEveryOperationHasExamples(async () => (await request(desk.app).get('/api/v1/openapi.json').expect(200)).body);
