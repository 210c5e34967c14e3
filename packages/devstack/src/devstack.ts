import fs from 'node:fs';
import path from 'node:path';
import { readDevClientFile, renderBanner, type DevClient } from './banner';
import { needsEmbeddedPostgres, redactPassword, resolveDatabaseUrls } from './database-urls';
import type { DevstackConfig } from './devstack-config';
import { DevstackError, isDevstackError } from './devstack-error';
import { embeddedServerUrl, startEmbeddedPostgres, type RunningEmbeddedPostgres } from './embedded-postgres';
import { recordEmbeddedPostgres } from './embedded-postgres-state';
import { ensureDatabases } from './ensure-databases';
import { formatLauncherLine, formatPostgresLine, formatServiceLine, type LineStyle } from './log-format';
import { describeExit, startManagedProcess, type ExitInfo, type ManagedProcess } from './managed-process';
import { probePort } from './port-check';
import { waitForHttpOk } from './readiness';
import { connectorKeyEnv } from './connector-key';
import { baseUrlOf, buildServiceEnv, devClientFileOf, readyzUrlOf } from './service-env';
import { ensureServiceClientFile, type ServiceClientCredential } from './service-client';
import { SERVICES, type ServiceDefinition, type ServiceName } from './services';

export interface DevstackIo {
  /** Receives every finished output line (launcher, PostgreSQL and services). */
  readonly write: (line: string) => void;
  /** The environment the services inherit. */
  readonly env: Record<string, string | undefined>;
}

export interface ReadyDevstack {
  readonly baseUrls: Record<ServiceName, string>;
  readonly databaseUrls: Record<ServiceName, string>;
  readonly devClient: DevClient | undefined;
}

export interface Devstack {
  /** Starts everything, watches it, stops it; resolves with the exit code for the process. */
  run(): Promise<number>;
  /** Begins the orderly stop. `force` skips the services' grace period (a second Ctrl-C). */
  stop(reason: string, options?: { force?: boolean }): void;
  /** Last resort when the launcher exits abruptly: ask every child to stop, without waiting. */
  requestStopNow(): void;
  /** Resolves when every service is ready, or with undefined when the start failed or was stopped. */
  readonly ready: Promise<ReadyDevstack | undefined>;
}

interface ServiceProcess {
  readonly service: ServiceDefinition;
  readonly process: ManagedProcess;
}

type Outcome =
  { readonly kind: 'stop-requested' } | { readonly kind: 'exited'; readonly name: string; readonly info: ExitInfo };

/** A duration for people: `15.0 s`. */
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Longest source label: 'devstack' and 'postgres'. */
const LABEL_WIDTH = 8;

export function createDevstack(config: DevstackConfig, io: DevstackIo): Devstack {
  const style: LineStyle = { format: config.logFormat, color: config.color, labelWidth: LABEL_WIDTH };
  const say = (message: string) => {
    for (const line of message.split('\n')) io.write(formatLauncherLine(line, style));
  };

  const abort = new AbortController();
  let force = false;
  let stopRequested: (() => void) | undefined;
  const stopRequestedPromise = new Promise<Outcome>((resolve) => {
    stopRequested = () => resolve({ kind: 'stop-requested' });
  });
  let resolveReady: (value: ReadyDevstack | undefined) => void = () => undefined;
  const ready = new Promise<ReadyDevstack | undefined>((resolve) => (resolveReady = resolve));

  let postgres: RunningEmbeddedPostgres | undefined;
  const services: ServiceProcess[] = [];

  async function startAll(): Promise<ReadyDevstack> {
    await assertServicesCanStart();
    fs.mkdirSync(config.dataRoot, { recursive: true });
    if (needsEmbeddedPostgres(config)) {
      postgres = await startEmbeddedPostgres({
        dataDir: path.join(config.dataRoot, 'postgres'),
        port: config.embeddedPostgresPort,
        fixableRoot: config.dataRoot,
        log: say,
        onServerLine: (line) => io.write(formatPostgresLine(line, style)),
        signal: abort.signal,
      });
      say(
        `PostgreSQL ${postgres.majorVersion} ` +
          `${postgres.createdCluster ? 'created and started' : 'started with the existing data'} on ` +
          `port ${config.embeddedPostgresPort}`,
      );
      // For `pnpm tenant:create` and the like: they find this server without EMBEDDED_PG_PORT.
      recordEmbeddedPostgres(config.dataRoot, config.embeddedPostgresPort);
    }
    const databaseUrls = resolveDatabaseUrls(
      config,
      postgres ? embeddedServerUrl(config.embeddedPostgresPort) : undefined,
    );
    const created = await ensureDatabases(SERVICES.map((service) => databaseUrls[service.name]));
    if (created.length > 0) say(`created database${created.length > 1 ? 's' : ''} ${created.join(', ')}`);
    abort.signal.throwIfAborted();
    // link's own credential at desk, generated once and kept under the data folder so restarts keep it.
    const serviceClient = ensureServiceClientFile(config.dataRoot);
    for (const service of SERVICES) services.push(spawnService(service, databaseUrls[service.name], serviceClient));
    await Promise.all(services.map(waitUntilReady));

    const devClient = io.env['BOOTSTRAP_CLIENT_ID'] ? undefined : readDevClientFile(devClientFileOf(config, io.env));
    const baseUrls = Object.fromEntries(
      SERVICES.map((service) => [service.name, baseUrlOf(config, service)]),
    ) as Record<ServiceName, string>;
    return { baseUrls, databaseUrls, devClient };
  }

  async function assertServicesCanStart(): Promise<void> {
    for (const service of SERVICES) {
      if (!config.serviceCommand && !fs.existsSync(entryOf(service))) {
        throw new DevstackError(
          `${path.relative(config.repoRoot, entryOf(service))} does not exist: build first (pnpm build; pnpm start builds for you)`,
        );
      }
      const port = config.ports[service.name];
      const state = await probePort(port, config.host);
      if (state !== 'free') {
        throw new DevstackError(
          `${service.name} cannot listen on ${config.host}:${port} (${state === 'in-use' ? 'already in use' : 'not allowed'}): ` +
            `stop whatever uses it, or choose another port with ${service.envPrefix}_PORT`,
        );
      }
    }
  }

  function entryOf(service: ServiceDefinition): string {
    return path.join(config.repoRoot, 'services', service.name, 'dist', 'index.js');
  }

  function spawnService(
    service: ServiceDefinition,
    databaseUrl: string,
    serviceClient: ServiceClientCredential,
  ): ServiceProcess {
    const dataDir = path.join(config.dataRoot, service.name);
    fs.mkdirSync(dataDir, { recursive: true });
    const [command, ...args] = config.serviceCommand
      ? config.serviceCommand.map((part) => part.replaceAll('{service}', service.name))
      : [process.execPath, entryOf(service)];
    const child = startManagedProcess({
      name: service.name,
      command: command ?? process.execPath,
      args,
      // link's connector secrets key, generated once under the data folder: secrets stored with it stay readable.
      env: {
        ...buildServiceEnv(service, config, databaseUrl, io.env, serviceClient),
        ...connectorKeyEnv(service.name, config.dataRoot, io.env),
      },
      cwd: config.repoRoot,
      onLine: (line) => {
        for (const formatted of formatServiceLine(service.name, line, style)) io.write(formatted);
      },
      stopSignal: 'SIGTERM',
      forceSignal: 'SIGKILL',
      signalGroup: true,
    });
    return { service, process: child };
  }

  async function waitUntilReady({ service, process: child }: ServiceProcess): Promise<void> {
    const url = readyzUrlOf(config, service);
    const done = new AbortController();
    const polling = waitForHttpOk(url, {
      timeoutMs: config.readyTimeoutMs,
      signal: AbortSignal.any([abort.signal, done.signal]),
    });
    polling.catch(() => undefined); // the loser of the race below must not surface as an unhandled rejection
    try {
      const outcome = await Promise.race([polling.then(() => undefined), child.exited]);
      if (outcome)
        throw new DevstackError(`${service.name} ${describeExit(outcome)} before it was ready (its output is above)`);
    } catch (error) {
      if (abort.signal.aborted || isDevstackError(error)) throw error;
      throw new DevstackError(`${service.name} is not ready: ${(error as Error).message}`);
    } finally {
      done.abort();
    }
    say(`${service.name} is ready`);
  }

  function firstExit(): Promise<Outcome> {
    const watched = [...services.map((entry) => entry.process), ...(postgres ? [postgres.process] : [])];
    return Promise.race(
      watched.map((child) => child.exited.then((info): Outcome => ({ kind: 'exited', name: child.name, info }))),
    );
  }

  /**
   * Stops the services, then PostgreSQL. Resolves with what did not stop by itself: a process the
   * launcher had to force (it ignored its stop signal for the grace period, or a second Ctrl-C asked
   * for it), or one that exited with an error while stopping. Empty: every process stopped cleanly.
   */
  async function teardown(): Promise<string[]> {
    const unclean: string[] = [];
    const report = (who: string, info: ExitInfo, stopSignal: NodeJS.Signals) => {
      if (info.forced) {
        const after = info.forced.afterMs === null ? '' : ` ${seconds(info.forced.afterMs)} after ${stopSignal}`;
        const why = force ? 'a second Ctrl-C asked for it' : 'it ignored the request to stop';
        const line = `${who} was killed with ${info.forced.signal}${after} (${why})${info.error ? `; it ${describeExit(info)}` : ''}`;
        say(line);
        unclean.push(line);
        return;
      }
      say(`${who} ${describeExit(info)}`);
      // Ended by its stop signal's default action is stopping as asked; any other end is not clean.
      const stoppedAsAsked = info.signal === stopSignal || (info.signal === null && info.code === 0);
      if (info.error || !stoppedAsAsked) unclean.push(`${who} ${describeExit(info)} while stopping`);
    };
    const running = services.filter((entry) => !entry.process.hasExited());
    if (running.length > 0) {
      say(`stopping ${running.map((entry) => entry.service.name).join(', ')}`);
      await Promise.all(
        running.map(async ({ service, process: child }) => {
          if (force) child.kill();
          report(service.name, await child.stop(config.stopTimeoutMs), 'SIGTERM');
        }),
      );
    }
    if (postgres && !postgres.process.hasExited()) {
      say('stopping PostgreSQL');
      report('PostgreSQL', await postgres.stop(), 'SIGINT');
    }
    return unclean;
  }

  function describeDatabases(databaseUrls: Record<ServiceName, string>): string[] {
    if (postgres) {
      return [
        `embedded PostgreSQL ${postgres.majorVersion}: ${postgres.serverUrl.replace(/\/postgres$/, '/<desk|link|hr>')}`,
        `data in ${path.join(config.dataRoot, 'postgres')}`,
      ];
    }
    return SERVICES.map((service) => `${service.name.padEnd(4)} ${redactPassword(databaseUrls[service.name])}`);
  }

  function describeRedis(): string {
    const url = io.env['REDIS_URL'];
    return url ? redactPassword(url) : 'REDIS_URL not set: each service keeps its rate-limit counters in memory';
  }

  return {
    ready,
    async run() {
      let exitCode = 0;
      try {
        const started = await startAll();
        io.write(
          renderBanner({
            services: SERVICES.map((service) => ({ name: service.name, baseUrl: started.baseUrls[service.name] })),
            tokenUrl: `${started.baseUrls.desk}/auth/token`,
            devClientFile: devClientFileOf(config, io.env),
            devClient: started.devClient,
            bootstrapClientId: io.env['BOOTSTRAP_CLIENT_ID'] || undefined,
            database: describeDatabases(started.databaseUrls),
            redis: describeRedis(),
          }),
        );
        resolveReady(started);
        const outcome = await Promise.race([stopRequestedPromise, firstExit()]);
        if (outcome.kind === 'exited') {
          const who = outcome.name === 'postgres' ? 'PostgreSQL' : outcome.name;
          say(`${who} ${describeExit(outcome.info)} unexpectedly: stopping everything`);
          exitCode = 1;
        }
      } catch (error) {
        resolveReady(undefined);
        if (!abort.signal.aborted) {
          say(isDevstackError(error) ? error.message : `unexpected error: ${(error as Error).stack ?? String(error)}`);
          exitCode = 1;
        }
      }
      const unclean = await teardown();
      // Said plainly, because `pnpm start` prints "Command failed" after any Ctrl-C, whatever the
      // exit code. "Cleanly" only when every process exited by itself: a kill is reported as one.
      if (unclean.length > 0) {
        say(`stopped, but not cleanly: ${unclean.join('; ')}`);
        exitCode = 1;
      } else {
        say(exitCode === 0 ? 'everything stopped cleanly' : 'stopped after a failure');
      }
      return exitCode;
    },
    stop(reason, options = {}) {
      const firstRequest = !abort.signal.aborted;
      if (firstRequest) say(`${reason}: stopping (press Ctrl-C again to skip the services' grace period)`);
      if (options.force && !force) {
        force = true;
        if (!firstRequest) say(`${reason}: killing the services now`);
        for (const entry of services) entry.process.kill();
      }
      stopRequested?.();
      abort.abort(new DevstackError(reason));
    },
    requestStopNow() {
      for (const entry of services) entry.process.requestStop();
      postgres?.process.requestStop();
    },
  };
}
