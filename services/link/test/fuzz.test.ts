import { describeFuzz } from '@msp/testkit';
import { startSeededLink } from './support/seeded-link';

describeFuzz({
  service: 'link',
  async setup() {
    // A limit high enough that the fuzzer measures the routes, not the rate limiter.
    const h = await startSeededLink({ rateLimitPerMinute: 10_000_000 });
    return { app: h.link.app, auth: h.auth, databaseUrl: h.link.databaseUrl, close: () => h.close() };
  },
});
