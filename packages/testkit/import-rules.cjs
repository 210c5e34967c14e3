// dependency-cruiser's rules for a service's src/ (run from inside it; see src/imports.suite.ts):
// data flows one way (route → service → repository) and events are recorded by the services.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module imports another that imports it back, directly or round a circle.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'schema-imports-no-repository',
      comment: 'A schema file describes the API; it never reaches into storage.',
      severity: 'error',
      from: { path: '\\.schemas\\.ts$' },
      to: { path: '\\.repository\\.ts$' },
    },
    {
      name: 'repository-builds-no-json-records-no-events',
      comment:
        'A repository returns plain records: the routes build API JSON and the service decides which event a change records.',
      severity: 'error',
      from: { path: '\\.repository\\.ts$', pathNot: '^events/' },
      to: { path: ['\\.mapper\\.ts$', '^events/[^/]+-events\\.ts$'] },
    },
  ],
  options: {
    // Only the service's own modules; Prisma's generated client left out. Type-only imports
    // count: they tie two files together as much as any.
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(generated|node_modules)/' },
    includeOnly: '^[^.@/][^:]*\\.ts$',
    tsPreCompilationDeps: true,
  },
};
