'use strict';
// Who lives where: the hosts, their addresses, ports and credentials. Everything else derives
// from this file, so the README's table and the running lab cannot disagree.

const path = require('node:path');

// A /24 no other setup on a CI machine uses (Docker's defaults are 172.17+ and the compose stack
// takes 10.89.8.0/24). LAB_SUBNET moves the whole lab (three octets, e.g. 10.78.0).
const SUBNET = process.env.LAB_SUBNET || '10.77.0';
if (!/^\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(SUBNET))
  throw new Error(`LAB_SUBNET must be three octets such as 10.77.0 (got ${SUBNET})`);

const ip = (last) => `${SUBNET}.${last}`;

/** Every namespace the lab creates starts with this; `down` removes whatever carries it. */
const NS_PREFIX = 'msplab-';
/** The namespace holding the bridge (the "switch"): every host's cable ends here. */
const SWITCH_NS = `${NS_PREFIX}sw`;
const BRIDGE = 'br0';
/** The root namespace's own cable into the switch, so tests on the machine reach the lab. */
const ROOT_LINK = 'msplab0';
const ROOT_IP = ip(1);

const HOSTS = {
  lb: { kind: 'lb', ip: ip(2) },
  db1: { kind: 'db', ip: ip(11) },
  db2: { kind: 'db', ip: ip(12) },
  db3: { kind: 'db', ip: ip(13) },
  redis1: { kind: 'redis', ip: ip(21) },
  redis2: { kind: 'redis', ip: ip(22) },
  redis3: { kind: 'redis', ip: ip(23) },
  app1: { kind: 'app', ip: ip(31) },
  app2: { kind: 'app', ip: ip(32) },
};
for (const [name, host] of Object.entries(HOSTS)) {
  host.name = name;
  host.ns = NS_PREFIX + name;
}

const hostsOf = (kind) => Object.values(HOSTS).filter((host) => host.kind === kind);

const PORTS = {
  pgRw: 5000,
  pgRo: 5001,
  haproxyStats: 7000,
  postgres: 5432,
  patroni: 8008,
  etcdClient: 2379,
  etcdPeer: 2380,
  redis: 6379,
  sentinel: 26379,
};

const SERVICES = [
  { name: 'desk', port: 3001, database: 'desk' },
  { name: 'link', port: 3002, database: 'link' },
  { name: 'hr', port: 3003, database: 'hr' },
];

// Lab values, known to everyone who reads this file: the lab holds no data worth a secret.
const CREDENTIALS = {
  superuser: { username: 'postgres', password: 'lab-postgres-password' },
  replication: { username: 'replicator', password: 'lab-replicator-password' },
  app: { username: 'msp', password: 'lab-msp-password' },
  // desk's API client of tenant "default" with every scope (BOOTSTRAP_CLIENT_ID/SECRET), for load
  // generators and tests; and link's service client at desk.
  apiClient: { clientId: 'lab-client', clientSecret: 'lab-client-secret-0123456789', tenant: 'default' },
  linkAtDesk: { clientId: 'link', clientSecret: 'lab-link-secret-0123456789' },
};

const PATRONI_SCOPE = 'msplab';
const SENTINEL_MASTER = 'msp';

const PG_BIN = '/usr/lib/postgresql/15/bin';
// The lab's processes see no pyenv, nvm or other shims from the caller's shell: Debian's tools only.
const SYSTEM_PATH = `${PG_BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

function defaultRunDir() {
  return path.resolve(process.env.LAB_RUN_DIR || '/tmp/msplab');
}

/** The URLs a client on this machine (the root namespace) or on an app host uses. */
function endpoints() {
  const lb = HOSTS.lb.ip;
  const { app } = CREDENTIALS;
  const database = (name, port) => `postgresql://${app.username}:${app.password}@${lb}:${port}/${name}`;
  return {
    lb,
    databaseUrl: (name) => database(name, PORTS.pgRw),
    databaseReadUrl: (name) => database(name, PORTS.pgRo),
    superuserUrl: `postgresql://${CREDENTIALS.superuser.username}:${CREDENTIALS.superuser.password}@${lb}:${PORTS.pgRw}/postgres`,
    redisSentinels: hostsOf('redis')
      .map((host) => `${host.ip}:${PORTS.sentinel}`)
      .join(','),
    sentinelName: SENTINEL_MASTER,
    /** HAProxy's port to the current Redis master, for clients without Sentinel support. */
    redisMasterUrl: `redis://${lb}:${PORTS.redis}`,
    serviceUrl: (service) => `http://${lb}:${SERVICES.find((s) => s.name === service).port}`,
    haproxyStats: `http://${lb}:${PORTS.haproxyStats}/`,
  };
}

module.exports = {
  SUBNET,
  NS_PREFIX,
  SWITCH_NS,
  BRIDGE,
  ROOT_LINK,
  ROOT_IP,
  HOSTS,
  hostsOf,
  PORTS,
  SERVICES,
  CREDENTIALS,
  PATRONI_SCOPE,
  SENTINEL_MASTER,
  PG_BIN,
  SYSTEM_PATH,
  defaultRunDir,
  endpoints,
};
