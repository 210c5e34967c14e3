import { describeConditionalRequests, describeFuzz } from '@msp/testkit';
import { startDesk } from './support/desk';
import { newTenant, seedEveryResource } from './support/helpdesk';

/** desk with one of every resource; limits high enough that the suites measure the routes, not the rate limiter. */
async function setup() {
  const desk = await startDesk({ rateLimitPerMinute: 10_000_000, tokenRateLimitPerMinute: 10_000_000 });
  const tenant = await newTenant(desk);
  await seedEveryResource(desk, tenant.token);
  return {
    app: desk.app,
    auth: `Bearer ${tenant.token}`,
    databaseUrl: desk.databaseUrl,
    replica: () => desk.replica(),
    close: () => desk.close(),
  };
}

describeFuzz({ service: 'desk', setup });
describeConditionalRequests({ service: 'desk', setup });
