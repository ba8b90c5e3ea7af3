// ESLint for the TypeScript of src/, test/ and bench/: typescript-eslint's recommended rules, plus the
// type-aware ones that catch a dropped promise, and the project's own: no raw setTimeout of a computed
// delay in src/. eslint-config-prettier comes last, so lint never argues with the formatter.

import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

/** node:test's test(), describe() and hooks return promises the runner itself awaits. */
const nodeTestCalls = ['test', 'describe', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'scripts/', 'examples/', 'docs/', '*.js', '*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.cts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: nodeTestCalls }] }],
      // A promise given where a void callback is expected (an event handler) is the norm in Node code;
      // what matters is that it is handled, which no-floating-promises checks inside it.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      // Unused names are tsc's to report too (noUnusedLocals, noUnusedParameters): the same `_` rule.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      // `interface Lifecycle extends k8s.Lifecycle {}` names a Kubernetes type in the project's own words.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      // A variable assigned once, after a cleanup that reads it was registered, stays a `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Node clamps a delay above 2^31-1 ms to 1 ms: a duration taken from a manifest or a flag goes through
    // setLongTimeout / sleepLong (src/util/timer.ts). A literal or a named constant is a known delay; a
    // computed one that is bounded says so where it is armed (an eslint-disable line naming the bound).
    files: ['src/**/*.ts'],
    ignores: ['src/util/timer.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.name='setTimeout'][arguments.length>1]:not([arguments.1.type='Literal']):not([arguments.1.name=/^[A-Z][A-Z0-9_]*$/])",
          message: 'A computed delay may pass 2^31-1 ms, which setTimeout turns into 1 ms: use setLongTimeout or sleepLong from src/util/timer.ts.',
        },
      ],
    },
  },
  {
    // Tests and the bench read untyped JSON answers and load gRPC packages by name, and match printed
    // tables column for column.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      'no-regex-spaces': 'off',
    },
  },
  prettier,
);
