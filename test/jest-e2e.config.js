/**
 * e2e tests: test/*.e2e-spec.ts boot the real AppModule on a real database — SQLite in a fresh
 * temporary file by default, PostgreSQL when DATABASE_URL=postgres://… (use a fresh database).
 * The service tier, test/services/*.e2e-spec.ts, runs here too, on the same database: the services
 * on a plain DataSource (test/setup/database.ts), business rules without HTTP.
 */
export default {
  rootDir: '..',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.e2e-spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
    // CommonJS packages that require() ESM-only NestJS: see test/setup/esm-require-transformer.cjs
    '/node_modules/@nestjs/throttler/.+\\.js$': '<rootDir>/test/setup/esm-require-transformer.cjs',
  },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/throttler/)'],
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  setupFiles: ['<rootDir>/test/setup/env.ts', '<rootDir>/test/setup/esm-interop.ts'],
  // every response is validated against the OpenAPI document; a violation fails the test
  setupFilesAfterEnv: ['<rootDir>/test/setup/openapi-assertions.ts'],
  testTimeout: 60000,
};
