import 'reflect-metadata';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import type { DataSource } from 'typeorm';
import { validateEnv } from '../config/env.validation.js';
import { buildDataSourceOptions, openDataSource, schemaOf } from '../database/data-source.js';
import { importJsonPlaceholder, type ImportReport } from '../import/import.service.js';
import { parseSourceData } from '../import/jsonplaceholder.js';
import { RESOURCES } from '../resources.js';

const USAGE = 'usage: npm run import -- <file> --password <password>   (or IMPORT_PASSWORD in the environment)';

/** Output streams of the command, replaceable in tests. */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** One line per collection saying what was loaded, e.g. `users: 10 imported, 0 already present`. */
export function formatReport(report: ImportReport): string[] {
  return Object.entries(report).map(([name, count]) => `${name}: ${count.inserted} imported, ${count.present} already present`);
}

/**
 * The import command (`npm run import -- <file> --password <pw>`): reads a JSONPlaceholder-shaped
 * file and loads it into the database of DATABASE_URL (migrations applied first). Returns the exit
 * status: 0 on success, 1 for bad input, a collision or a database failure, 2 for bad usage —
 * each failure reported as one line on `io.err`.
 */
export async function runImport(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  let file: string;
  let password: string | undefined;
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { password: { type: 'string' } }, allowPositionals: true, strict: true });
    if (positionals.length !== 1) throw new Error('exactly one file is required');
    file = positionals[0];
    password = values.password ?? env.IMPORT_PASSWORD;
    if (!password) throw new Error('a password for the imported users is required');
  } catch (error) {
    io.err(`import: ${(error as Error).message}; ${USAGE}`);
    return 2;
  }
  let dataSource: DataSource | undefined;
  try {
    let text: string;
    try {
      text = await readFile(path.resolve(env.INIT_CWD ?? process.cwd(), file), 'utf8');
    } catch (error) {
      throw new Error(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw new Error(`${file} is not valid JSON`);
    }
    const data = parseSourceData(raw);
    const config = validateEnv(env);
    dataSource = await openDataSource(
      buildDataSourceOptions(config.DATABASE_URL, schemaOf(RESOURCES), 2, undefined, {
        pooler: config.DB_POOLER,
        preparedStatements: config.DB_PREPARED_STATEMENTS,
      }),
    );
    const report = await importJsonPlaceholder(dataSource, data, password);
    for (const line of formatReport(report)) io.out(line);
    return 0;
  } catch (error) {
    io.err(`import failed: ${(error as Error).message.split('\n')[0]}`);
    return 1;
  } finally {
    if (dataSource?.isInitialized) await dataSource.destroy();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const status = await runImport(process.argv.slice(2), process.env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  });
  process.exitCode = status;
}
