// ts-jest for an ES module that makes itself a `require` from `import.meta.url` (email-reply-parser's
// regex.js, to try the optional `re2`): in the CommonJS ts-jest writes, `import.meta` is a syntax
// error and `require` exists already, so that line goes; any other `import.meta.url` becomes the
// file's URL. Everything else is compiled as jest.preset.js compiles it.
const { pathToFileURL } = require('node:url');
const { TsJestTransformer } = require('ts-jest');

const tsJest = new TsJestTransformer({ tsconfig: { module: 'commonjs', moduleResolution: 'node10', allowJs: true } });
const asCommonJs = (source, path) =>
  source
    .replace(/^\s*const require = createRequire\(import\.meta\.url\);?\s*$/m, '')
    .replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(path).href));

module.exports = {
  process: (source, path, options) => tsJest.process(asCommonJs(source, path), path, options),
  getCacheKey: (source, path, options) => tsJest.getCacheKey(asCommonJs(source, path), path, options),
};
