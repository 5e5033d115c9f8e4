/**
 * The fault suite: test/faults/*.faults-spec.ts run the built service (`dist/src/main.js`, built
 * once by global-setup.ts) as separate processes on real databases — SQLite files, a PostgreSQL
 * cluster and a Redis server each test creates for itself — and break them under load, through the
 * public HTTP API only. Serial (`--runInBand`): every scenario needs the machine's cores for itself.
 * The OpenAPI response assertions of the e2e suite are left out: the writers use raw sockets, and
 * the fault tests judge outcomes (statuses, the read-back audit), not shapes.
 */
export default {
  rootDir: '../..',
  testEnvironment: 'node',
  roots: ['<rootDir>/test/faults'],
  testMatch: ['**/*.faults-spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  globalSetup: '<rootDir>/test/faults/global-setup.ts',
  testTimeout: 300000,
};
