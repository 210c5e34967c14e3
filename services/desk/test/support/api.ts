import request from 'supertest';
import { createConformanceChecker } from '@msp/testkit';
import type { TestDesk } from './desk';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
const checkers = new WeakMap<TestDesk, ReturnType<typeof createConformanceChecker>>();

/**
 * supertest against desk, with every response checked against desk's OpenAPI document
 * (see @msp/testkit openapi-conformance.ts). Use it for every request a test makes.
 */
export function api(desk: TestDesk) {
  let checker = checkers.get(desk);
  if (!checker) {
    checker = createConformanceChecker(desk.openapi);
    checkers.set(desk, checker);
  }
  const conforming = checker;
  const call = (method: Method) => (url: string) =>
    request(desk.app)
      [method](url)
      .expect((response) => conforming.check(method, url, response));
  return { get: call('get'), post: call('post'), put: call('put'), patch: call('patch'), delete: call('delete') };
}

export type Api = ReturnType<typeof api>;
