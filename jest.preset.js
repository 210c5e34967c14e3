// Shared Jest settings: TypeScript through SWC, workspace packages from source
// (so a test never runs against a stale dist/), ESM-only test libraries
// (jose, oauth4webapi) transformed to CommonJS.
const path = require('path');

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/)?(jose|oauth4webapi)[@/])'],
  moduleNameMapper: {
    '^@msp/([a-z-]+)$': path.join(__dirname, 'packages/$1/src/index.ts'),
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testTimeout: 30000,
};
