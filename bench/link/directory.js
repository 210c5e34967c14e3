// The bench's SCIM directory (bench/link/run.js): users and groups in memory, SCIMMY doing the
// protocol, in a process of its own. link and the bare client both reach it over loopback from
// other processes, so each of their requests costs the same hops; in the bench's own process the
// bare client's calls would never leave it, while link's would wait for the bench's event loop
// (its polls, its bookkeeping) and for the scheduler to switch processes.
// Forked by startDirectory() below; the parent drives it by IPC: { filterSupported }, { allowWrites }.
const { randomBytes, randomUUID } = require('node:crypto');
const http = require('node:http');
const path = require('node:path');
const { fork } = require('node:child_process');
const { ROOT, serverNode } = require('../support');
const LINK = path.join(ROOT, 'services/link');

/** The directory: users and groups in memory, SCIMMY doing the protocol (runs in the child). */
async function serveDirectory(USERS, GROUPS) {
  // The directory's libraries are link's dev dependencies (ES modules; Node ≥ 20.19 requires them).
  const express = require(require.resolve('express', { paths: [LINK] }));
  const scimmyRouters = require(require.resolve('scimmy-routers', { paths: [LINK] }));
  const SCIMMYRouters = scimmyRouters.default;
  const { SCIMMY } = scimmyRouters;
  const token = `bench-${randomBytes(16).toString('hex')}`;
  const users = [];
  const groups = [];
  // Stamped a day ago: a delta (changes since the last run began, less link's 60 s margin) finds none.
  const created = new Date(Date.now() - 24 * 3600_000).toISOString();
  for (let g = 0; g < GROUPS; g++)
    groups.push({
      id: randomUUID(),
      displayName: `Group ${g}`,
      members: [],
      meta: { resourceType: 'Group', created, lastModified: created },
    });
  for (let u = 0; u < USERS; u++) {
    const user = {
      id: randomUUID(),
      externalId: `ext-${u}`,
      userName: `user${u}@contoso.example`,
      displayName: `User ${u}`,
      name: { givenName: 'User', familyName: String(u) },
      emails: [{ value: `user${u}@contoso.example`, type: 'work', primary: true }],
      active: u % 50 !== 0,
      meta: { resourceType: 'User', created, lastModified: created },
    };
    users.push(user);
    groups[u % GROUPS].members.push({ value: user.id });
  }
  // SCIMMY turns every resource egress returns into a schema instance before it cuts the page:
  // 10,000 users × 100 pages would measure SCIMMY, not link. So the directory cuts the page itself
  // and tells SCIMMY the total (its ListResponse then reports startIndex 1, which link does not read).
  const page = (target, rows) => {
    const { startIndex = 1, count = 20 } = target.constraints ?? {};
    target.constraints = { ...target.constraints, startIndex: 1, totalResults: rows.length };
    return rows.slice(startIndex - 1, startIndex - 1 + count);
  };
  // Read-only until the mover case; then PATCH (SCIMMY reads the resource, applies the operations
  // and hands the whole resource to ingress) replaces the stored one.
  let writable = false;
  const declare = (resource, store) =>
    SCIMMY.Resources.declare(resource)
      .egress((target) =>
        target.id
          ? store.find((row) => row.id === target.id)
          : page(target, target.filter ? target.filter.match(store) : store),
      )
      .ingress((target, data) => {
        const index = target.id ? store.findIndex((row) => row.id === target.id) : -1;
        if (!writable || index < 0) throw new SCIMMY.Types.Error(403, null, 'read-only directory');
        const updated = {
          ...data,
          id: target.id,
          meta: { ...store[index].meta, lastModified: new Date().toISOString() },
        };
        store[index] = updated;
        return updated;
      })
      .degress(() => {
        throw new SCIMMY.Types.Error(403, null, 'read-only directory');
      });
  declare(SCIMMY.Resources.User, users);
  declare(SCIMMY.Resources.Group, groups);

  const app = express();
  // startIndex and count are integers (RFC 7644 §3.4.2.4); SCIMMY ignores the strings Express parses.
  app.use((req, _res, next) => {
    const query = { ...req.query };
    for (const key of ['startIndex', 'count'])
      if (typeof query[key] === 'string' && /^\d+$/.test(query[key])) query[key] = Number(query[key]);
    Object.defineProperty(req, 'query', { value: query });
    next();
  });
  app.use(
    '/scim/v2',
    new SCIMMYRouters({
      type: 'bearer',
      handler: (req) => {
        if (req.header('Authorization') !== `Bearer ${token}`) throw new Error('Authorization failed');
        return 'bench';
      },
    }),
  );
  const server = http.createServer(app);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/scim/v2`,
    token,
    /** What ServiceProviderConfig says of filter.supported (scimmy-routers says true). */
    setFilterSupported: (supported) => SCIMMY.Config.set('filter', { supported, maxResults: 200 }),
    /** The mover case: PATCH of users and groups allowed, the enterprise extension (department, manager) declared. */
    allowWrites() {
      writable = true;
      SCIMMY.Resources.User.extend(SCIMMY.Schemas.EnterpriseUser, false);
    },
    users,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Starts the directory in a child process; resolves with its address, token and controls. */
function startDirectory({ users, groups }) {
  const child = fork(__filename, [], {
    execPath: serverNode().path,
    execArgv: serverNode().flags,
    env: {
      ...process.env,
      ...serverNode().env,
      BENCH_DIRECTORY_USERS: String(users),
      BENCH_DIRECTORY_GROUPS: String(groups),
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const ask = (command) =>
    new Promise((resolve, reject) => {
      child.once('message', (answer) => (answer.error ? reject(new Error(answer.error)) : resolve(answer)));
      child.send(command);
    });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the directory exited with code ${code} before it was ready`)));
    child.once('message', ({ baseUrl, token }) => {
      child.removeAllListeners('exit');
      resolve({
        baseUrl,
        token,
        pid: child.pid,
        /** What ServiceProviderConfig says of filter.supported (scimmy-routers says true). */
        setFilterSupported: (supported) => ask({ filterSupported: supported }),
        /** The mover case: PATCH of users and groups allowed, the enterprise extension (department, manager) declared. */
        allowWrites: () => ask({ allowWrites: true }),
        close: () =>
          new Promise((done) => {
            child.once('exit', done);
            child.kill();
          }),
      });
    });
  });
}

if (require.main === module && process.send) {
  serveDirectory(Number(process.env.BENCH_DIRECTORY_USERS), Number(process.env.BENCH_DIRECTORY_GROUPS)).then(
    (directory) => {
      process.on('message', (command) => {
        try {
          if ('filterSupported' in command) directory.setFilterSupported(command.filterSupported);
          if (command.allowWrites) directory.allowWrites();
          process.send({ ok: true });
        } catch (error) {
          process.send({ error: String(error) });
        }
      });
      process.on('disconnect', () => process.exit(0));
      process.send({ baseUrl: directory.baseUrl, token: directory.token });
    },
  );
}

module.exports = { startDirectory };
