import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

// Migrations are frozen history: nothing here is imported from the project (docs/extending.md).

/**
 * The trace context of the request that wrote an event (W3C `traceparent`, 55 characters; NULL
 * when tracing was off or no span was active), so that the event's webhook deliveries continue
 * that trace. Nullable: existing events have none.
 */
export class EventTraceContext1764520000000 implements MigrationInterface {
  name = 'EventTraceContext1764520000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('events', new TableColumn({ name: 'traceparent', type: 'varchar', length: '55', isNullable: true }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('events', 'traceparent');
  }
}
