'use strict';
// The configuration each host's software gets. Timings are a lab's (seconds, not minutes); each
// choice that matters for "no acknowledged write lost" says why next to it.

const path = require('node:path');
const {
  HOSTS,
  hostsOf,
  PORTS,
  SERVICES,
  CREDENTIALS,
  PATRONI_SCOPE,
  SENTINEL_MASTER,
  PG_BIN,
  SUBNET,
} = require('./topology');

/** Patroni's and etcd's clocks. Patroni requires loop_wait + 2 * retry_timeout <= ttl. */
const DEFAULT_TIMING = {
  ttl: 10,
  loopWait: 2,
  retryTimeout: 4,
  // etcd: a shared 2-CPU machine stalls a process for a few hundred ms now and then; the
  // defaults (100 / 1000 ms) made members call elections under load.
  etcdHeartbeatMs: 200,
  etcdElectionMs: 2000,
  sentinelDownAfterMs: 2000,
  sentinelFailoverTimeoutMs: 10_000,
};

function etcdArgs(host, runDir, token, timing) {
  const cluster = hostsOf('db')
    .map((db) => `${db.name}=http://${db.ip}:${PORTS.etcdPeer}`)
    .join(',');
  return [
    'etcd',
    '--name',
    host.name,
    '--data-dir',
    path.join(runDir, host.name, 'etcd'),
    '--listen-client-urls',
    `http://${host.ip}:${PORTS.etcdClient},http://127.0.0.1:${PORTS.etcdClient}`,
    '--advertise-client-urls',
    `http://${host.ip}:${PORTS.etcdClient}`,
    '--listen-peer-urls',
    `http://${host.ip}:${PORTS.etcdPeer}`,
    '--initial-advertise-peer-urls',
    `http://${host.ip}:${PORTS.etcdPeer}`,
    '--initial-cluster',
    cluster,
    '--initial-cluster-token',
    token,
    '--initial-cluster-state',
    'new',
    '--heartbeat-interval',
    String(timing.etcdHeartbeatMs),
    '--election-timeout',
    String(timing.etcdElectionMs),
    // A member back from a partition would otherwise start elections with the terms it ran up
    // alone and unseat the majority's leader: Patroni then loses etcd and demotes a healthy primary.
    '--pre-vote=true',
    // Patroni talks to etcd's v2 API (see patroniConfig).
    '--enable-v2=true',
    '--quota-backend-bytes',
    String(256 * 1024 * 1024),
    '--logger',
    'zap',
  ];
}

/**
 * Patroni's configuration (JSON, which its YAML loader reads). Synchronous replication:
 *
 * - `synchronous_mode: true`: a commit returns only once the synchronous standby has flushed it
 *   (synchronous_commit on), and Patroni promotes only that standby (the /sync key in etcd).
 *   When the leader is SIGKILLed, every acknowledged commit is therefore on the node promoted.
 * - Patroni changes /sync in etcd before it relaxes synchronous_standby_names, so a leader cut
 *   off from etcd cannot drop to asynchronous commits: its commits wait, it demotes itself after
 *   retry_timeout, and the waiting clients get an error, never an acknowledgement.
 * - `synchronous_mode_strict` (option `strict`): non-strict lets a primary with no standby left
 *   commit alone, and a new leader commits alone until its first loop finds a standby; an
 *   acknowledged write is then lost only by a second failure within that window. Strict closes
 *   the window, but writes stop whenever two of the three nodes are down. With three nodes, a
 *   single loss always leaves a standby, so both modes lose nothing to one fault; strict is
 *   the choice when a second fault must not lose writes either, at the price of availability.
 */
function patroniConfig(host, runDir, { strict = false, timing }) {
  const dir = path.join(runDir, host.name);
  const etcdHosts = hostsOf('db')
    .map((db) => `${db.ip}:${PORTS.etcdClient}`)
    .join(',');
  const { superuser, replication } = CREDENTIALS;
  return {
    scope: PATRONI_SCOPE,
    namespace: '/service/',
    name: host.name,
    log: { level: 'INFO', format: '%(asctime)s %(levelname)s: %(message)s' },
    restapi: { listen: `0.0.0.0:${PORTS.patroni}`, connect_address: `${host.ip}:${PORTS.patroni}` },
    // etcd's v2 API, not etcd3: Patroni 3.0.2's etcd3 code renews an expired leader lease with
    // an unconditional put of the leader key (fixed upstream in 3.0.3, patroni/patroni#2689). A
    // leader cut off from etcd for longer than the TTL then took the key back from the new leader
    // the moment the partition healed, and the new leader's acknowledged writes were rewound away.
    // The v2 code updates the key only with compare-and-swap on its own name.
    etcd: { hosts: etcdHosts, protocol: 'http' },
    bootstrap: {
      dcs: {
        ttl: timing.ttl,
        loop_wait: timing.loopWait,
        retry_timeout: timing.retryTimeout,
        maximum_lag_on_failover: 1048576,
        synchronous_mode: true,
        synchronous_mode_strict: strict,
        synchronous_node_count: 1,
        // A primary cut off from etcd demotes itself; its shutdown waits for its walsenders,
        // which wait for standbys it can no longer reach. Past this many seconds Patroni kills
        // it: a long stop let Patroni 3.0.2 start a second, racing demotion whose extra postmaster
        // kept the node out of the cluster for a minute after the partition healed.
        primary_stop_timeout: 2,
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          parameters: {
            wal_level: 'replica',
            hot_standby: 'on',
            synchronous_commit: 'on',
            max_connections: 200,
            max_wal_senders: 10,
            max_replication_slots: 10,
            wal_keep_size: '256MB',
            // pg_rewind needs hints (or checksums, which initdb enables too below).
            wal_log_hints: 'on',
            shared_buffers: '32MB',
            hot_standby_feedback: 'on',
            // Dead standbys (a partition drops their packets) are noticed in seconds, not a minute.
            wal_sender_timeout: '10s',
          },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { locale: 'C.UTF-8' }, 'data-checksums'],
    },
    postgresql: {
      listen: `0.0.0.0:${PORTS.postgres}`,
      connect_address: `${host.ip}:${PORTS.postgres}`,
      data_dir: path.join(dir, 'data'),
      bin_dir: PG_BIN,
      pgpass: path.join(dir, 'pgpass'),
      // A rewind that fails (e.g. WAL gone) re-clones the node instead of leaving it down.
      remove_data_directory_on_rewind_failure: true,
      remove_data_directory_on_diverged_timelines: true,
      authentication: {
        superuser: { username: superuser.username, password: superuser.password },
        replication: { username: replication.username, password: replication.password },
      },
      parameters: {
        // Never the machine's /var/run/postgresql: the host's own PostgreSQL keeps its socket there.
        unix_socket_directories: path.join(dir, 'socket'),
        logging_collector: 'on',
        log_directory: path.join(dir, 'pglog'),
        log_filename: 'postgresql.log',
        log_line_prefix: '%m [%p] %q%u@%d ',
        log_min_messages: 'info',
      },
      // Passwords on every network address (scram); trust only on the host's own socket.
      pg_hba: [
        'local all all trust',
        `host replication ${replication.username} ${SUBNET}.0/24 scram-sha-256`,
        `host replication ${replication.username} 127.0.0.1/32 scram-sha-256`,
        `host all all ${SUBNET}.0/24 scram-sha-256`,
        'host all all 127.0.0.1/32 scram-sha-256',
      ],
    },
    watchdog: { mode: 'off' },
    tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
  };
}

/**
 * One Redis of the three. min-replicas-to-write: a master that has had no replica for
 * min-replicas-max-lag seconds refuses writes, so a master cut off from the others stops taking
 * writes that a Sentinel failover on the other side would throw away.
 */
function redisConfig(host, runDir, { masterIp, minReplicasToWrite = 1 }) {
  const lines = [
    `bind ${host.ip} 127.0.0.1`,
    `port ${PORTS.redis}`,
    'protected-mode no',
    'daemonize no',
    `dir ${path.join(runDir, host.name)}`,
    'logfile ""',
    // Rate limits, leases and idempotency keys live as long as the replicas do; no disk.
    'save ""',
    'appendonly no',
    `min-replicas-to-write ${minReplicasToWrite}`,
    'min-replicas-max-lag 10',
    'repl-diskless-sync yes',
    'repl-diskless-sync-delay 0',
    'replica-serve-stale-data yes',
    'replica-read-only yes',
  ];
  if (masterIp && masterIp !== host.ip) lines.push(`replicaof ${masterIp} ${PORTS.redis}`);
  return `${lines.join('\n')}\n`;
}

function sentinelConfig(host, runDir, { masterIp, timing }) {
  return `${[
    `bind ${host.ip} 127.0.0.1`,
    `port ${PORTS.sentinel}`,
    'protected-mode no',
    'daemonize no',
    `dir ${path.join(runDir, host.name)}`,
    'logfile ""',
    `sentinel announce-ip ${host.ip}`,
    `sentinel monitor ${SENTINEL_MASTER} ${masterIp} ${PORTS.redis} 2`,
    `sentinel down-after-milliseconds ${SENTINEL_MASTER} ${timing.sentinelDownAfterMs}`,
    `sentinel failover-timeout ${SENTINEL_MASTER} ${timing.sentinelFailoverTimeoutMs}`,
    `sentinel parallel-syncs ${SENTINEL_MASTER} 1`,
  ].join('\n')}\n`;
}

/**
 * HAProxy on the balancer. PostgreSQL: 5000 goes to the node whose Patroni answers 200 on
 * /primary, 5001 to those answering 200 on /replica; when a server is marked down its sessions are
 * cut (on-marked-down shutdown-sessions), so no client keeps writing to a demoted primary.
 * HTTP: one frontend per service over both app hosts, checked on /readyz. Redis: 6379 to the master.
 */
function haproxyConfig(runDir) {
  const dbs = hostsOf('db');
  const apps = hostsOf('app');
  const pgListen = (name, port, check) => `
listen ${name}
    bind *:${port}
    mode tcp
    option tcplog
    option httpchk
    http-check send meth GET uri ${check}
    http-check expect status 200
    default-server inter 1s fastinter 500ms downinter 1s fall 2 rise 1 on-marked-down shutdown-sessions
${dbs.map((db) => `    server ${db.name} ${db.ip}:${PORTS.postgres} maxconn 150 check port ${PORTS.patroni}`).join('\n')}
`;
  const service = ({ name, port }) => `
frontend ${name}
    bind *:${port}
    mode http
    option httplog
    option forwardfor
    timeout client 60s
    # No app ready, or none answered: a problem document with Retry-After, as the apps' own 503.
    errorfile 502 ${path.join(runDir, 'lb', 'errors', '503.http')}
    errorfile 503 ${path.join(runDir, 'lb', 'errors', '503.http')}
    errorfile 504 ${path.join(runDir, 'lb', 'errors', '503.http')}
    default_backend ${name}

backend ${name}
    mode http
    balance roundrobin
    option httpchk
    http-check send meth GET uri /readyz
    http-check expect status 200
    # A request that never reached an app (connection refused or reset) goes to the other one;
    # one that reached it and got nothing back is retried only when replaying it is harmless.
    timeout server 60s
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response
    http-request disable-l7-retry if !METH_GET
    default-server inter 1s fastinter 500ms downinter 1s fall 2 rise 2 on-marked-down shutdown-sessions
${apps.map((app) => `    server ${app.name} ${app.ip}:${port} check`).join('\n')}
`;
  return `# Written by lab/ (lib/configs.js) at every \`lab up\`.
global
    maxconn 4000
    log stdout format raw local0 info
    stats socket ${path.join(runDir, 'lb', 'haproxy.sock')} mode 600 level admin
    stats timeout 10s

defaults
    log global
    timeout connect 2s
    timeout check 2s
    timeout queue 5s
    # PostgreSQL pools keep connections for long; HTTP requests are short.
    timeout client 30m
    timeout server 30m
    timeout http-request 10s
    timeout http-keep-alive 10s
    option clitcpka
    option srvtcpka
${pgListen('postgres_rw', PORTS.pgRw, '/primary')}${pgListen('postgres_ro', PORTS.pgRo, '/replica')}
# Redis's current master for clients that do not speak Sentinel (the services until they do):
# the server answering role:master. Sentinel stays the source of truth; this follows it within
# a check or two, and a master cut off from its replicas stops taking writes by itself
# (min-replicas-to-write) even while it still answers role:master here.
listen redis_master
    bind *:${PORTS.redis}
    mode tcp
    option tcplog
    # A replica never sends role:master: the check waits for it until this timeout, so keep it
    # short (a Redis answers INFO in well under a millisecond).
    timeout check 500ms
    option tcp-check
    tcp-check connect
    tcp-check send PING\\r\\n
    tcp-check expect string +PONG
    tcp-check send info\\ replication\\r\\n
    tcp-check expect string role:master
    tcp-check send QUIT\\r\\n
    tcp-check expect string +OK
    default-server inter 1s fastinter 500ms downinter 1s fall 2 rise 2 on-marked-down shutdown-sessions
${hostsOf('redis')
  .map((host) => `    server ${host.name} ${host.ip}:${PORTS.redis} check`)
  .join('\n')}

listen stats
    bind *:${PORTS.haproxyStats}
    mode http
    timeout client 10s
    timeout server 10s
    stats enable
    stats uri /
    stats refresh 2s
${SERVICES.map(service).join('')}`;
}

/**
 * The balancer's own answer when it has no app to give a request to (all marked down) or the app
 * gave none (died mid-request, timed out): 503 with Retry-After, in the apps' problem format, so
 * clients retry as they do on the apps' 503s. Raw HTTP, as HAProxy's errorfile wants it.
 */
function haproxyUnavailableResponse() {
  const body = JSON.stringify({
    type: 'urn:msp:problem:service-unavailable',
    title: 'Service Unavailable',
    status: 503,
    code: 'service-unavailable',
    detail: 'No instance of this service could answer at the moment. Retry after the time given in Retry-After.',
  });
  return [
    'HTTP/1.1 503 Service Unavailable',
    'Content-Type: application/problem+json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Retry-After: 2',
    'Cache-Control: no-store',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

module.exports = {
  DEFAULT_TIMING,
  etcdArgs,
  patroniConfig,
  redisConfig,
  sentinelConfig,
  haproxyConfig,
  haproxyUnavailableResponse,
  HOSTS,
};
