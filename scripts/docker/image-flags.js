'use strict';
// The Node flags the production images run the services with, read from the Dockerfile's CMD, so
// that whatever starts a service outside an image (pnpm bench, the HA lab) runs it as the images do
// and cannot drift from them.
const { readFileSync } = require('node:fs');
const path = require('node:path');

/** The flags of `CMD ["node", <flags>, "dist/index.js"]` in the Dockerfile of the checkout at `root`. */
function imageFlags(root = path.resolve(__dirname, '../..')) {
  const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
  if (!cmd) throw new Error(`${root}/Dockerfile has no CMD ["node", ..., "dist/index.js"]`);
  const argv = JSON.parse(cmd[1]);
  return argv.slice(1, -1);
}

module.exports = { imageFlags };
