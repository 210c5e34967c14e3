// `node openapi-types.js <dir>`: for each `<name>.openapi.json` in the folder, writes `<name>.ts`, the
// document's TypeScript types (openapi-typescript). A process of its own: openapi-typescript loads
// ES modules through require(), which Node does and Jest's module registry does not.
const fs = require('node:fs');
const path = require('node:path');
const { default: openapiTS, astToString } = require('openapi-typescript');

async function main(dir) {
  for (const file of fs.readdirSync(dir).filter((name) => name.endsWith('.openapi.json'))) {
    const document = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    // defaultNonNullable off: a field with a default is one a request may leave out; `required`
    // alone says what a request must send and what a response always has.
    const ast = await openapiTS(document, { silent: true, defaultNonNullable: false });
    fs.writeFileSync(path.join(dir, file.replace(/\.openapi\.json$/, '.ts')), astToString(ast));
  }
}

main(process.argv[2]).catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
