// Prints jest flags that save a JSON result file when JEST_JSON_DIR is set (CI sums them up).
const dir = process.env.JEST_JSON_DIR;
if (dir)
  process.stdout.write(
    `--json --outputFile=${dir}/${process.argv[2]}-${process.env.DATABASE_URL?.startsWith('postgres') ? 'pg' : 'sqlite'}-${Date.now()}.json`,
  );
