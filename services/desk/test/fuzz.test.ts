import { describeFuzz } from '@msp/testkit';
import { startDesk } from './support/desk';
import { newTenant, seedEveryResource } from './support/helpdesk';

describeFuzz({
  service: 'desk',
  async setup() {
    // Limits high enough that the fuzzer measures the routes, not the rate limiter.
    const desk = await startDesk({ rateLimitPerMinute: 10_000_000, tokenRateLimitPerMinute: 10_000_000 });
    const tenant = await newTenant(desk);
    await seedEveryResource(desk, tenant.token);
    return { app: desk.app, auth: `Bearer ${tenant.token}`, databaseUrl: desk.databaseUrl, close: () => desk.close() };
  },
});
