import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', 'data', 'dist', 'coverage'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration through src/core/config.ts.' },
      ],
    },
  },
  {
    // The browser bundles under web/ (built by scripts/build-web.js) run in pages, not in Node.
    files: ['web/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['src/core/config.ts', 'scripts/**', 'test/**', 'bench/**', 'bin/**', '**/*.test.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Tests and benchmarks read JSON answers field by field; typing every body would only restate the schemas.
    files: ['test/**', 'bench/**', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
