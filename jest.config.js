// Unit tests: every src/ file ending in .spec.ts, without booting Nest or a database. ESM via ts-jest (see STYLE.md).
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/src'],
  testMatch: ['**/*.spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  setupFiles: ['<rootDir>/test/setup/esm-interop.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
    // CommonJS packages that require() ESM-only NestJS: see test/setup/esm-require-transformer.cjs
    '/node_modules/@nestjs/throttler/.+\\.js$': '<rootDir>/test/setup/esm-require-transformer.cjs',
  },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/throttler/)'],
};
