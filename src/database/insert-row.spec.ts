import { Column, DataSource, Entity, PrimaryGeneratedColumn, VersionColumn } from 'typeorm';
import { insertRow } from './insert-row.js';
import Database from 'better-sqlite3';

@Entity('notes')
class Note {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 50 })
  title: string;

  @Column({ type: 'varchar', length: 16, default: 'open' })
  status: string;

  @Column({ type: 'datetime' })
  created_at: Date;

  @VersionColumn()
  version: number;
}

describe('insertRow (SQLite)', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = new DataSource({ type: 'better-sqlite3', driver: Database, database: ':memory:', entities: [Note] });
    await dataSource.initialize();
    // the table as a migration would create it (the service never lets TypeORM synchronize a schema)
    await dataSource.query(
      "CREATE TABLE notes (id integer PRIMARY KEY AUTOINCREMENT NOT NULL, title varchar(50) NOT NULL, status varchar(16) NOT NULL DEFAULT ('open'), created_at datetime NOT NULL, version integer NOT NULL)",
    );
  });

  afterAll(() => dataSource.destroy());

  it('returns the generated ids and stores exactly the values, dates as TypeORM writes them', async () => {
    const repo = dataSource.getRepository(Note);
    const at = new Date('2026-01-02T03:04:05.678Z');
    const first = await insertRow(repo, { title: 'a', status: 'done', created_at: at });
    const second = await insertRow(repo, { title: 'b', status: 'open', created_at: at });
    expect(second).toBe(first + 1);
    const stored = await repo.findOneByOrFail({ id: first });
    expect(stored).toEqual({ id: first, title: 'a', status: 'done', created_at: at, version: 1 });
    const [raw] = (await dataSource.query('SELECT created_at FROM notes WHERE id = ?', [first])) as { created_at: string }[];
    // what Repository.insert writes for the same Date
    await repo.insert({ title: 'c', created_at: at });
    const [viaTypeorm] = (await dataSource.query("SELECT created_at FROM notes WHERE title = 'c'")) as { created_at: string }[];
    expect(raw.created_at).toBe(viaTypeorm.created_at);
  });

  it('leaves undefined properties to the column default and sets a version column left out to 1', async () => {
    const repo = dataSource.getRepository(Note);
    const id = await insertRow(repo, { title: 'd', status: undefined, created_at: new Date() });
    expect(await repo.findOneByOrFail({ id })).toMatchObject({ title: 'd', status: 'open', version: 1 });
  });

  it('throws for a property that is not a column', async () => {
    const repo = dataSource.getRepository(Note);
    await expect(insertRow(repo, { title: 'e', created_at: new Date(), nope: 1 } as never)).rejects.toThrow('Note.nope is not an insertable column');
  });
});
