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

describe('advisoryResourceLock when the holding connection is lost', () => {
  test(
    'When PostgreSQL terminates the session that holds a lock while its task runs, then the task still ' +
      'ends, nothing is thrown outside it, and the key can be taken again at once',
    async () => {
      const key = randomUUID();
      const uncaught: unknown[] = [];
      const onUncaught = (error: unknown) => uncaught.push(error);
      // Jest would report an unhandled 'error' of the client as a failure of its own; listening here
      // makes the assertion below say it.
      process.on('uncaughtException', onUncaught);
      try {
        const held = lock(key, async () => {
          // The holder's backend: the session that holds the advisory lock of this key.
          const { rows } = await pool.query<{ pid: number }>(
            `SELECT l.pid FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
             AND ((l.classid::bigint << 32) | l.objid::bigint) = (hashtextextended($1, 0) & x'ffffffffffffffff'::bigint)`,
            [key],
          );
          expect(rows).toHaveLength(1);
          await pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
          await pause(100);
          return 'done';
        });
        await expect(held).resolves.toBe('done');
        // The lock went with the session: another holder gets it without waiting.
        await expect(lock(key, async () => 'again')).resolves.toBe('again');
        expect(uncaught).toEqual([]);
      } finally {
        process.off('uncaughtException', onUncaught);
      }
    },
  );
});
