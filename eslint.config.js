// ESLint with typescript-eslint's type-aware rules (STYLE.md "Habits").
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/.*.ts', 'node_modules/', 'src/generated/', 'web/dist/', 'web/src/gql/', 'web/vite.config.ts', 'web/.dist-*/', 'dist/', '.data/', 'test-artifacts/', 'src/compat/*.mjs', 'eslint.config.js'] },
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // A caller can send arrays longer than a call can take as arguments (V8 throws RangeError near 120k): a spread into
    // push/unshift/Math.max/min of request-sized data would answer 500. Loop instead.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name=/^(push|unshift|max|min|fromCharCode|fromCodePoint)$/] > SpreadElement",
          message: 'No spread into push/unshift/Math.max/min/fromCharCode: data-sized arrays overflow the call stack. Loop instead.',
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-console': 'off',
    },
  },
);
