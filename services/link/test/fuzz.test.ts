import { describeFuzz } from '@msp/testkit';
import { startSeededLink } from './support/seeded-link';

describeFuzz({
  service: 'link',
  async setup() {
    // A limit high enough that the fuzzer measures the routes, not the rate limiter. No workers:
    // the runs an accepted request starts stay queued, because a run retrying its tasks seconds
    // later changed onboardings and sync_runs while a rejected request was being checked.
    const h = await startSeededLink({ rateLimitPerMinute: 10_000_000, workers: false });
    return { app: h.link.app, auth: h.auth, databaseUrl: h.link.databaseUrl, close: () => h.close() };
  },
});
