// ESLint (flat config): typescript-eslint's recommended rules, and with type information the rules
// that catch promise mistakes (a promise not awaited or not handled, a promise where a callback's
// result is ignored, awaiting a non-promise); Prettier owns the layout (eslint-config-prettier
// turns off the rules it covers). `npm run lint`; CI runs it with `npm run format:check`.
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'bench/.cache/**', 'node_modules/**', 'src/metadata.ts', 'openapi/**', 'samples/**', 'data/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // as the Nest starter: `any` is sometimes the honest type (decorator metadata, test bodies)
      '@typescript-eslint/no-explicit-any': 'off',
      // Nest's own type of a handler and of a class (ExecutionContext.getHandler(), getClass())
      '@typescript-eslint/no-unsafe-function-type': 'off',
      // the input rules match control characters on purpose (they refuse or escape them)
      'no-control-regex': 'off',
      // OpenTelemetry's wrapping functions run with the wrapped object as `this`: the instrumentation is named once
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['instrumentation', 'current'] }],
    },
  },
  // CommonJS files (Jest transformers) require
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
