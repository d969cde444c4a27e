// eslint for the side panel (issue 22, item 5): typescript-eslint's recommended rules on src/
// and test/; `npm run lint` also runs `prettier --check`.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['lib/**', 'node_modules/**', '../dsh_notebook/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      // payloads from the server are loosely typed at the boundary (api.ts)
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none' }],
      eqeqeq: ['error', 'smart'],
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error'
    }
  },
  {
    files: ['test/**/*.ts'],
    languageOptions: { globals: { ...globals.jest } }
  },
  {
    files: ['*.mjs', '*.js'],
    languageOptions: { globals: { ...globals.node } }
  }
);
