import { sql, type Generated } from 'kysely';
import { afterKeyOf, openDatabase, type Database } from '../src';
import { emptyDatabase } from './fixture';

interface Tables {
  items: { id: Generated<number>; owner: string; name: string; rank: number };
}

let empty: Awaited<ReturnType<typeof emptyDatabase>>;
let database: Database<Tables>;

beforeAll(async () => {
  empty = await emptyDatabase('listkey');
  database = openDatabase<Tables>(empty.url, { max: 2 });
  await sql`CREATE TABLE items (id serial PRIMARY KEY, owner text NOT NULL, name text NOT NULL UNIQUE, rank int NOT NULL)`.execute(
    database.db,
  );
  await database.db
    .insertInto('items')
    .values([
      { owner: 'a', name: 'first', rank: 3 },
      { owner: 'b', name: 'second', rank: 7 },
    ])
    .execute();
});
afterAll(async () => {
  await database.close();
  await empty.drop();
});

const ownedBy = (owner: string) => database.db.selectFrom('items').where('owner', '=', owner);

test('When after names an item of the scope, then its key is the values of the order columns, by id or another column', async () => {
  const { id } = await database.db
    .selectFrom('items')
    .select('id')
    .where('name', '=', 'first')
    .executeTakeFirstOrThrow();
  expect(await afterKeyOf(ownedBy('a'), { columns: ['rank', 'id'], direction: 'desc' }, String(id))).toEqual([3, id]);
  expect(await afterKeyOf(ownedBy('a'), { columns: ['rank', 'name'], direction: 'asc' }, 'first', 'name')).toEqual([
    3,
    'first',
  ]);
});

test('When after names an item outside the scope, or none, then there is no key', async () => {
  const { id } = await database.db
    .selectFrom('items')
    .select('id')
    .where('name', '=', 'second')
    .executeTakeFirstOrThrow();
  expect(await afterKeyOf(ownedBy('a'), { columns: ['rank', 'id'], direction: 'desc' }, String(id))).toBeUndefined();
  expect(
    await afterKeyOf(ownedBy('a'), { columns: ['rank', 'name'], direction: 'asc' }, 'nobody', 'name'),
  ).toBeUndefined();
});
