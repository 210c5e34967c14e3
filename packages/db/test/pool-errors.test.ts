import { createPool, testServerUrl } from '../src';

// A service's pool (createPool, under Prisma's driver adapter) when PostgreSQL ends a connection
// that a caller has checked out and runs no query on: pg emits 'error' on that client, and pg-pool
// does not listen while it is lent. Without a listener of its own the process ends (it ended hr in
// database-faults.test, where Prisma's listener for a transaction came a tick after the checkout).

const pool = createPool(testServerUrl());
afterAll(() => pool.end());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test(
  'When the session of a checked-out connection is terminated between two queries, then nothing is thrown ' +
    'outside, the next query on it fails with a connection error, and the pool serves again',
  async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    // Jest would report an unhandled 'error' of the client as a failure of its own; listening here
    // makes the assertion below say it.
    process.on('uncaughtException', onUncaught);
    try {
      const lent = await pool.connect();
      const { rows } = await lent.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const ended = new Promise((resolve) => lent.once('end', resolve));
      await pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await ended;
      await pause(50);
      expect(uncaught).toEqual([]);
      await expect(lent.query('SELECT 1')).rejects.toThrow(/connection error|Connection terminated/);
      lent.release();
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect(pool.totalCount).toBe(1);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  },
);
