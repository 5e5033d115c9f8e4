// Generates src/metadata.ts with the @nestjs/swagger CLI plugin's metadata (DTO properties,
// validators, doc comments), so that `tsc`, the app and jest all share one OpenAPI source
// without a compiler plugin in each toolchain. Loaded by SwaggerModule.loadPluginMetadata().
import { PluginMetadataGenerator } from '@nestjs/cli/lib/compiler/plugins/plugin-metadata-generator.js';
import { ReadonlyVisitor } from '@nestjs/swagger/plugin';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const generator = new PluginMetadataGenerator();
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
