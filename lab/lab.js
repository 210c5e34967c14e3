#!/usr/bin/env node
'use strict';
// The HA lab: real hosts (network namespaces) on one machine. As a module: require('lab/lab.js')
// gives up/down/status/kill/partition/heal/startApps/...; as a command: `node lab/lab.js help`.

const path = require('node:path');
const lab = require('./lib/lab');

module.exports = lab;

const USAGE = `usage: node lab/lab.js <command> [options]        (as root; LAB_RUN_DIR, LAB_SUBNET move the lab)

  up [--apps [<checkout>]] [--app-cmd "<cmd>"] [--strict] [--min-replicas-to-write N]
     [--ttl S --loop-wait S --retry-timeout S]
                        build the lab (removing any earlier one) and leave it running until \`down\`;
                        --apps also starts desk, link, hr on app1 and app2 from <checkout> (default:
                        this repository), which must be built (services/*/dist)
  down [--keep-logs]    remove every process, namespace, cable and the run directory
  status [--json]       Patroni leader, Redis master per Sentinel, HAProxy servers, apps, faults
  wait                  until everything is healthy again (cluster whole, replicas in sync, apps ready)

  kill <target>         SIGKILL: postgres+patroni (db), redis-server (redis), haproxy (lb), services (app)
  crash <target>        SIGKILL every process on the host (etcd and Sentinel included)
  isolate <target>      the host's cable down (ip link set <host> down at the switch)
  partition <target> [--from h1,h2]
                        drop traffic between the host and others (nftables in the host); default:
                        db host <-> other db hosts, redis <-> other redis, app <-> db+redis
  fault <kind> <target> the same as the four above (kind: kill, crash, isolate, partition)
  heal <target>|all     undo every fault on the host and wait until it serves again

  apps start [<checkout>] [--app-cmd "<cmd>"]
  apps stop <host> [<service>]       SIGTERM (the services drain)
  apps restart <host> <service> [--no-drain]
  apps rolling [--no-drain]          restart every instance, one at a time

  leader | redis-master               print the current one
  env [<service>]                     the variables an app host's service gets (shell format)
  exec <host> -- <command...>         run a command inside a host (e.g. exec lb -- ss -tn)
  psql [--ro] [<database>] -- <sql>   SQL through HAProxy (5000, or 5001 with --ro) as superuser

targets: lb db1 db2 db3 redis1 redis2 redis3 app1 app2, or leader, replica, redis-master`;

function parseArgs(argv) {
  const positional = [];
  const flags = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--') {
      flags['--'] = argv.slice(i + 1);
      break;
    }
    if (arg.startsWith('--')) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s);
      const next = argv[i + 1];
      if (inline !== undefined) flags[name] = inline;
      else if (
        ['apps', 'app-cmd', 'from', 'min-replicas-to-write', 'run-dir', 'ttl', 'loop-wait', 'retry-timeout'].includes(
          name,
        ) &&
        next !== undefined &&
        !next.startsWith('--')
      ) {
        flags[name] = next;
        i += 1;
      } else flags[name] = true;
    } else positional.push(arg);
  }
  return { positional, flags };
}

async function main() {
  const { positional, flags } = parseArgs(process.argv.slice(2));
  const [command, ...rest] = positional;
  const options = { runDir: flags['run-dir'] };
  const repoRoot = path.resolve(__dirname, '..');
  const print = (value) =>
    process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);

  switch (command) {
    case 'up': {
      const result = await lab.up({
        ...options,
        strict: Boolean(flags.strict),
        apps: flags.apps ? (flags.apps === true ? repoRoot : path.resolve(flags.apps)) : undefined,
        appCmd: typeof flags['app-cmd'] === 'string' ? flags['app-cmd'] : undefined,
        minReplicasToWrite:
          flags['min-replicas-to-write'] !== undefined ? Number(flags['min-replicas-to-write']) : undefined,
        timing: Object.fromEntries(
          [
            ['ttl', 'ttl'],
            ['loopWait', 'loop-wait'],
            ['retryTimeout', 'retry-timeout'],
          ]
            .filter(([, flag]) => flags[flag] !== undefined)
            .map(([key, flag]) => [key, Number(flags[flag])]),
        ),
      });
      print(lab.formatStatus(await lab.status(options)));
      print(`timings (ms): ${JSON.stringify(result.timings)}`);
      return;
    }
    case 'down':
      await lab.down({ ...options, keepLogs: Boolean(flags['keep-logs']) });
      return;
    case 'status': {
      const s = await lab.status(options);
      print(flags.json ? s : lab.formatStatus(s));
      return;
    }
    case 'wait':
      print(`healthy after ${(await lab.waitHealthy(options)).ms} ms`);
      return;
    case 'fault':
      return fault(rest[0], rest[1], flags, options);
    case 'kill':
    case 'crash':
    case 'isolate':
    case 'partition':
      return fault(command, rest[0], flags, options);
    case 'heal':
      if (!rest[0]) throw new lab.LabError('heal <target>|all');
      await lab.heal(rest[0], options);
      return;
    case 'apps':
      return apps(rest, flags, options, repoRoot);
    case 'leader':
      print((await lab.leader()) ?? 'none');
      return;
    case 'redis-master':
      print((await lab.redisMaster()).host ?? 'none agreed');
      return;
    case 'env':
      return printEnv(rest[0], print);
    case 'exec': {
      const argv = flags['--'];
      if (!rest[0] || !argv || !argv.length) throw new lab.LabError('exec <host> -- <command...>');
      const { stdout, stderr, code } = await lab.execIn(rest[0], argv);
      process.stdout.write(stdout);
      process.stderr.write(stderr);
      process.exitCode = code ?? 1;
      return;
    }
    case 'psql': {
      const sql = (flags['--'] || []).join(' ');
      if (!sql) throw new lab.LabError('psql [--ro] [<database>] -- <sql>');
      print(await lab.psql(sql, { database: rest[0] || 'postgres', port: flags.ro ? 5001 : 5000 }));
      return;
    }
    case undefined:
    case 'help':
    case '--help':
      print(USAGE);
      return;
    default:
      throw new lab.LabError(`unknown command "${command}"\n\n${USAGE}`);
  }
}

async function fault(kind, target, flags, options) {
  if (!target) throw new lab.LabError(`${kind ?? 'fault <kind>'} <target>`);
  const from = typeof flags.from === 'string' ? flags.from.split(',').filter(Boolean) : undefined;
  const actions = { kill: lab.kill, crash: lab.crash, isolate: lab.isolate, partition: lab.partition };
  if (!actions[kind]) throw new lab.LabError(`unknown fault "${kind}" (kill, crash, isolate, partition)`);
  await actions[kind](target, { ...options, from });
}

async function apps([sub, ...rest], flags, options, repoRoot) {
  const drain = !flags['no-drain'];
  switch (sub) {
    case 'start':
      await lab.startApps(
        rest[0] ? path.resolve(rest[0]) : repoRoot,
        {},
        { ...options, appCmd: typeof flags['app-cmd'] === 'string' ? flags['app-cmd'] : undefined },
      );
      return;
    case 'stop':
      if (!rest[0]) throw new lab.LabError('apps stop <host> [<service>]');
      await lab.stopApp(rest[0], rest[1], options);
      return;
    case 'restart':
      if (!rest[1]) throw new lab.LabError('apps restart <host> <service>');
      await lab.restartApp(rest[0], rest[1], { ...options, drain });
      return;
    case 'rolling':
      await lab.rollingRestart({ ...options, drain });
      return;
    default:
      throw new lab.LabError('apps start|stop|restart|rolling');
  }
}

function printEnv(service, print) {
  const e = lab.endpoints();
  const name = service || 'desk';
  const vars = {
    DATABASE_URL: e.databaseUrl(name),
    DATABASE_READ_URL: e.databaseReadUrl(name),
    REDIS_SENTINELS: e.redisSentinels,
    REDIS_SENTINEL_NAME: e.sentinelName,
    DESK_URL: e.serviceUrl('desk'),
    LINK_URL: e.serviceUrl('link'),
    HR_URL: e.serviceUrl('hr'),
    REDIS_URL: e.redisMasterUrl,
    SUPERUSER_URL: e.superuserUrl,
    API_CLIENT_ID: lab.credentials.apiClient.clientId,
    API_CLIENT_SECRET: lab.credentials.apiClient.clientSecret,
    TOKEN_URL: `${e.serviceUrl('desk')}/api/v1/auth/token`,
  };
  print(
    Object.entries(vars)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
  );
}

if (require.main === module) {
  main().catch((error) => {
    process.stderr.write(`lab: ${error.message}\n`);
    process.exitCode = 1;
  });
}
