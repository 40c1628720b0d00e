// ESLint: the recommended JavaScript and typescript-eslint rules over the sources, tests, benches and the console.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.ci/', 'examples/plugin-template/dist/', 'openapi/', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests, benches and support scripts read JSON answers of every shape.
    files: ['test/**', 'bench/**', 'support/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/console/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
