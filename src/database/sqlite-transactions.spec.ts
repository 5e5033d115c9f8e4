import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import Database from 'better-sqlite3';
import { installSqliteConnectionGate } from './sqlite-transactions.js';

/** A row big enough to need new pages (overflow pages of 4 KiB). */
const BIG = 'x'.repeat(20_000);

describe('the SQLite connection gate: a transaction SQLite rolled back by itself (SQLITE_FULL) leaves none open', () => {
  let dataSource: DataSource;
  const connection = () => (dataSource.driver as unknown as { databaseConnection: { inTransaction: boolean } }).databaseConnection;
  const count = async () => Number((await dataSource.query<Array<{ n: number }>>('SELECT count(*) AS n FROM notes'))[0].n);

  /** Transaction levels as a subscriber counts them from the start, commit and rollback events (as the event outbox does). */
  let level: number;
  let rollbacks: number;

  beforeEach(async () => {
    dataSource = await new DataSource({ type: 'better-sqlite3', driver: Database, database: ':memory:' }).initialize();
    installSqliteConnectionGate(dataSource, 1000);
    level = 0;
    rollbacks = 0;
    dataSource.subscribers.push({
      afterTransactionStart: () => void (level += 1),
      afterTransactionCommit: () => void (level -= 1),
      afterTransactionRollback: () => {
        level -= 1;
        rollbacks += 1;
      },
    });
    await dataSource.query('CREATE TABLE notes (id integer PRIMARY KEY AUTOINCREMENT NOT NULL, body text NOT NULL)');
    await dataSource.query("INSERT INTO notes (body) VALUES ('first')");
    const [{ page_count: pages }] = await dataSource.query<Array<{ page_count: number }>>('PRAGMA page_count');
    await dataSource.query(`PRAGMA max_page_count = ${pages}`);
  });
  afterEach(() => dataSource.destroy());

  it('after a disk-full failure, a rolled-back and a committed transaction behave, and nothing stays open', async () => {
    const full = dataSource.transaction(async (manager) => {
      await manager.query("INSERT INTO notes (body) VALUES ('small')");
      await manager.query('INSERT INTO notes (body) VALUES (?)', [BIG]);
    });
    await expect(full).rejects.toMatchObject({ driverError: { code: 'SQLITE_FULL' } });
    expect(connection().inTransaction).toBe(false);
    expect(await count()).toBe(1);
    expect({ level, rollbacks }).toEqual({ level: 0, rollbacks: 1 });

    // the same inside a savepoint: every level unwinds, each announced once
    const nested = dataSource.transaction((manager) => manager.transaction((inner) => inner.query('INSERT INTO notes (body) VALUES (?)', [BIG])));
    await expect(nested).rejects.toMatchObject({ driverError: { code: 'SQLITE_FULL' } });
    expect(connection().inTransaction).toBe(false);
    expect({ level, rollbacks }).toEqual({ level: 0, rollbacks: 3 });

    await dataSource.query('PRAGMA max_page_count = 1073741823');
    const refused = dataSource.transaction(async (manager) => {
      await manager.query("INSERT INTO notes (body) VALUES ('rolled back')");
      throw new Error('refused by the service');
    });
    await expect(refused).rejects.toThrow('refused by the service');
    expect(connection().inTransaction).toBe(false);
    await dataSource.transaction((manager) => manager.query('INSERT INTO notes (body) VALUES (?)', [BIG]));
    expect(connection().inTransaction).toBe(false);
    expect(await count()).toBe(2);
    expect(level).toBe(0);
  });

  it('leaves an ordinary rollback, nested ones included, to TypeORM', async () => {
    await dataSource.query('PRAGMA max_page_count = 1073741823');
    const nested = dataSource.transaction(async (manager) => {
      await manager.query("INSERT INTO notes (body) VALUES ('outer')");
      await expect(
        manager.transaction(async (inner) => {
          await inner.query("INSERT INTO notes (body) VALUES ('inner')");
          throw new Error('inner refused');
        }),
      ).rejects.toThrow('inner refused');
      expect(connection().inTransaction).toBe(true);
      throw new Error('outer refused');
    });
    await expect(nested).rejects.toThrow('outer refused');
    expect(connection().inTransaction).toBe(false);
    expect(await count()).toBe(1);
  });

  it('leaves other databases alone', () => {
    const other = new DataSource({ type: 'postgres' });
    const createQueryRunner = other.createQueryRunner;
    installSqliteConnectionGate(other, 1000);
    expect(other.createQueryRunner).toBe(createQueryRunner);
  });
});
