import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Timestamp column type for the running driver: `timestamptz` on PostgreSQL, `datetime` on SQLite. */
function timestampType(queryRunner: QueryRunner): string {
  return queryRunner.connection.driver.options.type === 'postgres' ? 'timestamptz' : 'datetime';
}

/** The widgets table of the throwaway resource (test/extending.e2e-spec.ts); reverted when the test ends. */
export class Widgets1999000000000 implements MigrationInterface {
  name = 'Widgets1999000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const ts = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'widgets',
        columns: [
          { name: 'id', type: 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' },
          { name: 'name', type: 'varchar', length: '100' },
          { name: 'colour', type: 'varchar', length: '8' },
          { name: 'owner_id', type: 'integer' },
          { name: 'created_at', type: ts },
          { name: 'updated_at', type: ts },
          { name: 'version', type: 'integer', default: 1 },
        ],
        foreignKeys: [{ columnNames: ['owner_id'], referencedTableName: 'users', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
        indices: [{ name: 'idx_widgets_owner_id_id', columnNames: ['owner_id', 'id'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('widgets');
  }
}
