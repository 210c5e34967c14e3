import type { Logger } from '@msp/http';

export interface SlaBreachJob {
  /** Sweeps now and then every `intervalMs` until stopped. */
  start(): void;
  /** Stops; resolves once a sweep under way has finished. */
  stop(): Promise<void>;
}

/**
 * The periodic breach sweep (SLA_SWEEP_INTERVAL_MS). It keeps no state of its own: what is due
 * and what was noticed lives in ticket_slas, so a restarted process, or any replica, carries on
 * where another left off, and the claims make each breach noticed once (sla.service.ts).
 */
export function createSlaBreachJob(
  sweep: () => Promise<number>,
  intervalMs: number,
  logger: Logger,
  name = 'sla breach sweep',
): SlaBreachJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;

  const tick = () => {
    timer = undefined;
    running = sweep()
      .then((found) => {
        if (found)
          logger.info(name === 'sla breach sweep' ? 'sla breaches noticed' : `${name}: done`, { breaches: found });
      })
      .catch((error: unknown) => {
        logger.error(`${name} failed`, { error: error instanceof Error ? error.message : String(error) });
      })
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, intervalMs).unref();
      });
  };

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      tick();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
