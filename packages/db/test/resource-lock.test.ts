import { randomUUID } from 'node:crypto';
import { advisoryResourceLock, createPool, testServerUrl } from '../src';

// advisoryResourceLock with several keys (desk's bulk change and merge of tickets): taken on one
// session in a fixed order, so holders of overlapping sets given in any order queue instead of
// deadlocking, and a holder of one of the keys waits for the holder of many.
const pool = createPool(testServerUrl());
const lock = advisoryResourceLock(pool);
afterAll(async () => {
  await lock.close();
  await pool.end();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('advisoryResourceLock with several keys', () => {
  test('When two tasks hold overlapping sets of keys given in opposite orders, then they run one after the other and neither deadlocks', async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const log: string[] = [];
    const task = (name: string) => async () => {
      log.push(`${name} start`);
      await pause(100);
      log.push(`${name} end`);
      return name;
    };
    const results = await Promise.all([lock([a, b, c], task('first')), lock([c, b, a, a], task('second'))]);
    expect(results).toEqual(['first', 'second']);
    const [x, y] = [log[0]!.split(' ')[0], log[2]!.split(' ')[0]];
    expect(log).toEqual([`${x} start`, `${x} end`, `${y} start`, `${y} end`]);
  });

  test('When one key of a held set is asked for alone, then its task starts only after the set is freed, and every lock is freed afterwards', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const log: string[] = [];
    const many = lock([a, b], async () => {
      log.push('many start');
      await pause(150);
      log.push('many end');
    });
    await pause(30);
    const one = lock(b, async () => {
      log.push('one');
    });
    await Promise.all([many, one]);
    expect(log).toEqual(['many start', 'many end', 'one']);
    // Another session gets both at once: nothing was left held.
    const { rows } = await pool.query<{ free: boolean }>(
      `SELECT pg_try_advisory_lock(hashtextextended(k, 0)) AND pg_advisory_unlock(hashtextextended(k, 0)) AS free FROM unnest($1::text[]) AS k`,
      [[a, b]],
    );
    expect(rows).toEqual([{ free: true }, { free: true }]);
  });
});
