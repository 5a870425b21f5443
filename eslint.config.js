/**
 * ESLint (`npm run lint`, after Prettier's check): typescript-eslint's type-aware recommended
 * rules, which see through types what a worker gets wrong quietly (a promise nobody awaits, a
 * promise where a callback's result is ignored, a `return` that leaves a try block before its
 * promise settles), plus a few rules of the same kind. Formatting is Prettier's alone.
 */
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** Node's globals, for the .mjs scripts and fixtures (they have no type information to say them). */
const nodeGlobals = Object.fromEntries(
  [
    'process',
    'console',
    'Buffer',
    'URL',
    'TextDecoder',
    'TextEncoder',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'AbortController',
    'structuredClone',
  ].map((name) => [name, 'readonly']),
);

export default defineConfig(
  { ignores: ['dist/', 'tmp/', 'fixtures/', 'php-fixture-gen/', 'schemas/', '**/*.generated.ts'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: fileURLToPath(new URL('.', import.meta.url)) },
    },
    rules: {
      // A `return promise` inside try/catch/finally leaves the block before the promise settles:
      // its rejection skips the catch, and the finally (a lock's release) runs too early.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      // A new kind of job view or stop reason must be handled wherever the others are.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      eqeqeq: ['error', 'smart'],
      // `_name` marks what destructuring leaves out on purpose (`{ payload: _payload, ...rest }`).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // An interface naming a JSON shape (`interface Envelope extends JsonObject {}`) is documentation.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      // Handlers are `async (job) => {}` by contract, and interfaces return promises: an async function need not await.
      '@typescript-eslint/require-await': 'off',
      // The wire's scalars (JsonValue, PhpValue, database columns) are turned to text as PHP's (string) cast does, knowingly.
      '@typescript-eslint/no-base-to-string': 'off',
      // The codec and the JSON writer match control characters on purpose (PHP's escapes, names, NUL-marked visibility).
      'no-control-regex': 'off',
    },
  },
  {
    // Tests and benches read JSON.parse'd CLI output and Laravel's records, untyped by nature; expect() is their check.
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The dashboard's page runs in the browser.
    files: ['src/ui/assets/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'document',
          'window',
          'fetch',
          'location',
          'addEventListener',
          'removeEventListener',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'clearInterval',
          'URLSearchParams',
          'URL',
          'console',
          'confirm',
          'alert',
          'navigator',
          'history',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    // Outside tsconfig.json's program (scripts, fixtures, configs): the rules that need no types.
    files: ['**/*.mjs', '**/*.js', '*.config.ts'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: nodeGlobals },
  },
);
