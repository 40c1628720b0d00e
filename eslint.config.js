// ESLint: the recommended JavaScript and typescript-eslint rules over the sources, tests, benches and the console,
// and two type-aware rules over the TypeScript: a promise is awaited (or handed off on purpose), never dropped.
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
    // Type information comes from the nearest tsconfig.json (the root one, or the plugin template's).
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
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
