#!/usr/bin/env node
// Writes docs/configuration.md from the schemas the services validate their environment with (their
// built dist/config.js) and from the launcher's own variable list, so the page says what the code
// reads and cannot drift from it. Every variable needs a `description` in its schema.
//
//   node scripts/config-docs.js           writes the page (`pnpm docs:config` builds first, then runs this)
//   node scripts/config-docs.js --check   exits 1 when the committed page differs from what it would write
//
// packages/devstack/test/config-docs.test.ts runs the check in `pnpm test`.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const PAGE = path.join(root, 'docs', 'configuration.md');

const SERVICES = [
  { name: 'desk', schema: 'DeskConfigSchema', what: 'helpdesk and tokens' },
  { name: 'link', schema: 'LinkConfigSchema', what: 'integration' },
  { name: 'hr', schema: 'HrConfigSchema', what: 'HR and payroll' },
];

/** Each service's variables as its schema declares them, in declaration order. */
function loadSchemas() {
  return SERVICES.map((service) => {
    const file = path.join(root, 'services', service.name, 'dist', 'config.js');
    if (!fs.existsSync(file)) throw new Error(`${path.relative(root, file)} is missing: build first (pnpm build)`);
    const schema = require(file)[service.schema];
    const required = new Set(schema.required ?? []);
    const variables = Object.entries(schema.properties).map(([name, property]) => ({
      name,
      property,
      required: required.has(name),
    }));
    return { ...service, variables };
  });
}

function loadLauncherVariables() {
  const file = path.join(root, 'packages', 'devstack', 'dist', 'devstack-config.js');
  if (!fs.existsSync(file)) throw new Error(`${path.relative(root, file)} is missing: build first (pnpm build)`);
  return require(file).LAUNCHER_VARIABLES;
}

const code = (value) => `\`${String(value).replace(/\|/g, '\\|')}\``;
/** Text for a table cell: one line, pipes escaped, and `<` outside code spans kept from reading as HTML. */
const cell = (text) =>
  String(text)
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .split('`')
    .map((part, i) => (i % 2 === 0 ? part.replace(/</g, '&lt;') : part))
    .join('`');

function rangeOf(p) {
  const low =
    p.exclusiveMinimum !== undefined
      ? `> ${p.exclusiveMinimum}`
      : p.minimum !== undefined
        ? `≥ ${p.minimum}`
        : undefined;
  const high =
    p.exclusiveMaximum !== undefined
      ? `< ${p.exclusiveMaximum}`
      : p.maximum !== undefined
        ? `≤ ${p.maximum}`
        : undefined;
  if (p.minimum !== undefined && p.maximum !== undefined) return `${p.minimum}–${p.maximum}`;
  return [low, high].filter(Boolean).join(', ');
}

/** What a value may be, in words: the schema's type and bounds. */
function typeOf(p) {
  if (p.anyOf) return p.anyOf.map((choice) => code(choice.const)).join(', ');
  switch (p.type) {
    case 'integer':
    case 'number': {
      const range = rangeOf(p);
      return `${p.type === 'integer' ? 'integer' : 'number'}${range ? ` ${range}` : ''}`;
    }
    case 'boolean':
      return '`true`, `false`';
    case 'string': {
      const parts = ['string'];
      // Long patterns say less than the description does; short ones are the clearest statement.
      if (p.pattern && p.pattern.length <= 40) parts.push(`matching ${code(p.pattern)}`);
      if (p.minLength > 1) parts.push(`of at least ${p.minLength} characters`);
      return parts.join(' ');
    }
    default:
      return p.type ?? '';
  }
}

function defaultOf(variable) {
  const { property, required } = variable;
  if (property.default !== undefined) return code(property.default);
  return required ? '**required**' : 'unset';
}

function table(variables) {
  return [
    '| variable | type | default | description |',
    '|---|---|---|---|',
    ...variables.map(
      (v) => `| ${code(v.name)} | ${typeOf(v.property)} | ${defaultOf(v)} | ${cell(v.property.description)} |`,
    ),
  ].join('\n');
}

const same = (a, b) => a.required === b.required && JSON.stringify(a.property) === JSON.stringify(b.property);

/** The page, from the schemas and the launcher's list. */
function render(services = loadSchemas(), launcher = loadLauncherVariables()) {
  const missing = services.flatMap((s) =>
    s.variables.filter((v) => !v.property.description?.trim()).map((v) => `${s.name} ${v.name}`),
  );
  if (missing.length) throw new Error(`variables without a description in their config schema: ${missing.join(', ')}`);

  // A variable every service declares alike is listed once; the rest under the service.
  const [first, ...others] = services;
  const common = first.variables.filter((v) =>
    others.every((s) => s.variables.some((w) => w.name === v.name && same(v, w))),
  );
  const commonNames = new Set(common.map((v) => v.name));

  const launcherRows = launcher.map(([names, meaning]) => {
    const listed = names
      .split(/\s*(?:,|\/)\s*/)
      .map(code)
      .join(', ');
    return `| ${listed} | ${cell(meaning)} |`;
  });

  return [
    '# Configuration',
    '',
    "<!-- Generated by scripts/config-docs.js from the services' config schemas (`services/*/src/config.ts`, the",
    "     shared properties in `packages/http/src/config.ts` and `packages/events/src/retention.ts`) and the launcher's",
    '     list (`packages/devstack/src/devstack-config.ts`). Edit the descriptions there, then run `pnpm docs:config`. -->',
    '',
    'Each service reads its environment once, at start, against its schema. A missing or malformed value stops the',
    'process with a message that names the variable; an empty value counts as unset. Nothing is read again later.',
    'The defaults run the three services on one machine; `pnpm start` sets the rest for you (see the launcher below).',
    'What production needs set is marked in the descriptions (`NODE_ENV=production`); the Kubernetes manifests show',
    'a complete set ([operations](operations.md)).',
    '',
    '## Every service',
    '',
    table(common),
    '',
    ...services.flatMap((s) => [
      `## ${s.name} (${s.what})`,
      '',
      table(s.variables.filter((v) => !commonNames.has(v.name))),
      '',
    ]),
    '## The launcher (`pnpm start`)',
    '',
    '`pnpm start` reads these itself (`node packages/devstack/dist/cli.js --help` lists them too). It passes every',
    "other variable of its environment on to the services, and sets what they must agree on: each one's `PORT`,",
    '`HOST`, `DATABASE_URL` and `DATA_DIR` (under its data folder); `AUTH_ISSUER`, `AUTH_AUDIENCE` and `AUTH_JWKS_URL`',
    "following desk's port; link's service client at desk (`SERVICE_CLIENTS`, `DESK_API_URL`, `DESK_CLIENT_ID`,",
    "`DESK_CLIENT_SECRET`); link's `CONNECTOR_ENCRYPTION_KEY`, kept in its data folder; desk's `DEV_CLIENT_FILE`;",
    "`OUTBOUND_ALLOW_LOOPBACK=true` and the images' `MALLOC_MMAP_THRESHOLD_`. Where you set one of these yourself,",
    'yours wins, except the ports, addresses and folders the launcher chose.',
    '',
    '| variable | meaning |',
    '|---|---|',
    ...launcherRows,
    '',
  ].join('\n');
}

function main() {
  const page = render();
  if (process.argv.includes('--check')) {
    const committed = fs.existsSync(PAGE) ? fs.readFileSync(PAGE, 'utf8') : '';
    if (committed !== page) {
      const ours = page.split('\n');
      const theirs = committed.split('\n');
      const line = ours.findIndex((text, i) => text !== theirs[i]);
      console.error(
        `docs/configuration.md is not what the config schemas give (first difference at line ${line + 1}):`,
      );
      console.error(`  committed: ${theirs[line] ?? '(end of file)'}`);
      console.error(`  generated: ${ours[line] ?? '(end of file)'}`);
      console.error('Run `pnpm docs:config` and commit the page.');
      process.exit(1);
    }
    console.log('docs/configuration.md is up to date');
    return;
  }
  fs.mkdirSync(path.dirname(PAGE), { recursive: true });
  fs.writeFileSync(PAGE, page);
  console.log(`wrote ${path.relative(root, PAGE)}`);
}

if (require.main === module) {
  try {
    main();
  } catch (error) {
    console.error(`config-docs: ${error.message}`);
    process.exit(1);
  }
}

module.exports = { render };
