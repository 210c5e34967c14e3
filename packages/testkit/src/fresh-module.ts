/**
 * A fresh copy of the module at `path` (absolute) and of everything it imports, sharing no memory
 * with the copy the test itself uses: what a second process of the service would load, for tests
 * of two instances. Prisma's client must still come from the shared copy (its engine's
 * WebAssembly breaks when loaded twice in one process), so pass the instance a client made there.
 */
export function freshModule<T>(path: string): T {
  let loaded!: T;
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- jest.isolateModules works on require only
    loaded = require(path) as T;
  });
  return loaded;
}
