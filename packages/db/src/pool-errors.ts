import { Pool, type PoolConfig } from 'pg';

/**
 * A pg Pool whose connections' errors never end the process.
 *
 * A pg client emits 'error' when its connection fails while no query of its own is running on it
 * (PostgreSQL restarted, the session terminated); an 'error' without a listener ends the process.
 * pg-pool listens only while a client is idle: from checkout to release the borrower has to. Prisma's
 * driver adapter adds its listener to a transaction's connection one promise tick after the checkout,
 * but a new connection's first ReadyForQuery and a termination right behind it can arrive in the same
 * read of the socket, and pg parses both in one go: the checkout happens, then the error is emitted
 * to nobody. Under writes while hr's sessions were terminated this ended hr (database-faults.test).
 *
 * So every connection gets a listener of its own for life. The client is already marked unusable
 * when it fires: its pending queries fail (a 503 to their callers) and pg-pool discards it on
 * release. An idle client losing its connection is taken out by the pool, whose own 'error' is
 * swallowed likewise: the next checkout opens a new one.
 */
export function poolSurvivingConnectionErrors(config: PoolConfig): Pool {
  const pool = new Pool(config);
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}
