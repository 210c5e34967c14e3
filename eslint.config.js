// One ESLint config for the whole repository. Each package lints itself (`"lint": "eslint ."`,
// turbo's `lint` task); the root's own scripts are linted by the root task `//#lint:root`.
//
// Only the syntactic presets: typescript-eslint's type-checked ones would build a TypeScript
// program per package and roughly double CI time, for checks `tsc --noEmit` (typecheck) and the
// tests mostly cover already.
const js = require('@eslint/js');
const { defineConfig, globalIgnores } = require('eslint/config');
const globals = require('globals');
const tseslint = require('typescript-eslint');

/** Selectors for a binding that would shadow CommonJS's module scope in compiled output. */
function shadowingModuleScope() {
  const names = '/^(exports|module|require|__filename|__dirname)$/';
  const message = 'This name shadows CommonJS module scope in the compiled output; choose another.';
  return [
    `VariableDeclarator[id.name=${names}]`,
    `:function > Identifier.params[name=${names}]`,
    `AssignmentPattern > Identifier.left[name=${names}]`,
    `ObjectPattern > Property > Identifier.value[name=${names}]`,
    `ArrayPattern > Identifier[name=${names}]`,
    `CatchClause > Identifier.param[name=${names}]`,
    `:matches(ImportSpecifier, ImportDefaultSpecifier, ImportNamespaceSpecifier) > Identifier.local[name=${names}]`,
    `:matches(FunctionDeclaration, ClassDeclaration) > Identifier.id[name=${names}]`,
  ].map((selector) => ({ selector, message }));
}

module.exports = defineConfig([
  // Generated code and build or run output.
  globalIgnores([
    '**/dist/**',
    '**/src/generated/**',
    '**/test/generated/**',
    '**/node_modules/**',
    '.data/**',
    '**/coverage/**',
    'bench/results/**',
  ]),

  {
    files: ['**/*.ts', '**/*.js'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    rules: {
      // `== null` is the one loose comparison worth keeping (null or undefined).
      eqeqeq: ['error', 'smart'],
      // Prettier puts a computed member call of a chain (`request(app)\n[method](url)`) on a line
      // of its own; with the semicolons it always prints that is no ASI hazard (eslint-config-prettier
      // turns this rule off for the same reason).
      'no-unexpected-multiline': 'off',
      // `_`-prefixed arguments are required by a signature (Express error handlers) but unused.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // Type-only imports are erased by tsc and SWC alike; saying so keeps imports honest about
      // what loads at run time. Inline `type` for mixed imports, as the code already does.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },

  // Prettier keeps code within 120 columns but leaves strings, template literals and comments
  // as written; this keeps those within a limit a side-by-side diff still shows whole. ESLint
  // core's max-len is deprecated for @stylistic's but kept until ESLint 11.
  {
    files: ['**/*.ts'],
    rules: { 'max-len': ['error', { code: 160, tabWidth: 2 }] },
  },

  // tsc's CommonJS output refers to a module's own exports as `exports.name`: a local binding called
  // `exports` (or `module`, `require`) turns those references into the local's properties.
  {
    files: ['**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...shadowingModuleScope()],
    },
  },

  // Services and the shared libraries they run log JSON lines through the logger; a stray
  // console.log there breaks the log stream. CLIs, scripts, the bench and tests may print.
  {
    files: ['services/*/src/**/*.ts', 'packages/{http,auth,db}/src/**/*.ts'],
    rules: { 'no-console': 'error' },
  },

  // ICU stays out of the services' memory (docs/adr/0008): its collator, number and date formatting
  // load code and data that stay for the process's life, at the first use of any of these.
  {
    files: ['services/*/src/**/*.ts', 'packages/*/src/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'Intl', message: 'Intl loads ICU for good: @msp/calendar reads time zones from the tz database.' },
      ],
      'no-restricted-properties': [
        'error',
        ...['localeCompare', 'toLocaleString', 'toLocaleDateString', 'toLocaleTimeString'].map((property) => ({
          property,
          message:
            'Locale-aware methods load ICU for good: compare with < or compareDates, group digits with groupDigits.',
        })),
      ],
    },
  },

  // Tests parse JSON responses whose shape the assertions check; `any` is the honest type there.
  {
    files: ['**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },

  // Plain JavaScript (bench, scripts, bin, jest configs) is CommonJS run by Node.
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
]);
