// Generates src/metadata.ts with the @nestjs/swagger CLI plugin's metadata (DTO properties,
// validators, doc comments), so that `tsc`, the app and jest all share one OpenAPI source
// without a compiler plugin in each toolchain. Loaded by SwaggerModule.loadPluginMetadata().
// The generator type-checks the project first: on type errors it prints them and this script
// exits 1 with one line (no stack trace), writing nothing.
import { PluginMetadataGenerator } from '@nestjs/cli/lib/compiler/plugins/plugin-metadata-generator.js';
import { ReadonlyVisitor } from '@nestjs/swagger/plugin';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const generator = new PluginMetadataGenerator();
try {
  generator.generate({
    visitors: [
      new ReadonlyVisitor({
        introspectComments: true,
        classValidatorShim: true,
        esmCompatible: true,
        pathToSource: path.join(root, 'src'),
        dtoFileNameSuffix: ['.dto.ts', '.query.ts', '.response.ts'],
      }),
    ],
    outputDir: path.join(root, 'src'),
    filename: 'metadata.ts',
    tsconfigPath: 'tsconfig.build.json',
    printDiagnostics: false,
  });
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`swagger-metadata: ${message.split('\n')[0].replace(/\.$/, '')} (listed above); src/metadata.ts was not written.\n`);
  process.exitCode = 1;
}
