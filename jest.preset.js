// Shared Jest settings. TypeScript is compiled by TypeScript itself (ts-jest, one file at a time
// as `isolatedModules` allows, with the package's own tsconfig.json), so the tests run the same
// CommonJS that `tsc` writes to dist/ for `pnpm start` and the images: a different compiler here
// once hid a bug that only tsc's output had. One option differs: `module` is `commonjs` instead of
// `node16`, which turns a dynamic `import()` into `require()`, because Jest's module registry
// loads ES modules only behind an experimental flag; every other construct is emitted alike.
// Workspace packages resolve to their sources, so a test never runs against a stale dist/. The
// ESM-only libraries (jose, oauth4webapi, a package's own list) go through the same compiler.
const path = require('path');

const ESM_ONLY = ['jose', 'oauth4webapi', 'email-reply-parser'];

module.exports = {
  testEnvironment: 'node',
  transform: {
    // email-reply-parser (an ES module desk loads, and so every package whose tests start desk)
    // reads import.meta.url, which CommonJS has not: jest.import-meta-transform.js gives it.
    '/email-reply-parser/.+\\.js$': path.join(__dirname, 'jest.import-meta-transform.js'),
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: { module: 'commonjs', moduleResolution: 'node10', allowJs: true } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(\\.pnpm/)?(${ESM_ONLY.join('|')})[@/])`],
  moduleNameMapper: {
    '^@msp/([a-z-]+)$': path.join(__dirname, 'packages/$1/src/index.ts'),
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testTimeout: 30000,
};
