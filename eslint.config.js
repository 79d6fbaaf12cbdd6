// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'client/dist/', 'node_modules/', '.data/', 'devnet/artifacts/', 'bench/out/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Type-aware rules: promises that nobody awaits, switches that miss a case, `any` leaking out.
  ...tseslint.configs.recommendedTypeChecked.map((config) => ({ ...config, files: ['**/*.ts'] })),
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    // Tests read JSON answers as `any` on purpose (they compare whole bodies with expectations).
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // Stubs stand in for async functions (resolvers, lookups) without awaiting anything.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'max-params': ['warn', 4],
      // Processes log through pino (shared/log.ts); only CLIs and benchmarks talk on stdout.
      'no-console': 'error',
    },
  },
  { files: ['bin/**', 'bench/**', 'test/**', 'devnet/main.ts'], rules: { 'no-console': 'off' } },
  {
    // The status page's browser script (server/status): no modules, the browser's globals.
    files: ['server/status/public/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly',
        document: 'readonly',
        fetch: 'readonly',
        URLSearchParams: 'readonly',
        Node: 'readonly',
        CSS: 'readonly',
        setTimeout: 'readonly',
      },
    },
  },
  {
    // Processes never import each other: they talk through Postgres and Redis only.
    files: ['server/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['**/indexer/**', '**/webhooks/**', '**/devnet/**'] }] },
  },
  {
    files: ['indexer/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['**/server/**', '**/webhooks/**', '**/devnet/**'] }] },
  },
  {
    files: ['webhooks/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['**/server/**', '**/indexer/**', '**/devnet/**'] }] },
  },
  {
    files: ['shared/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['**/server/**', '**/indexer/**', '**/webhooks/**', '**/devnet/**'] }] },
  },
);
