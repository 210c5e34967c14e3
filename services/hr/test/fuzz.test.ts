import { describeConditionalRequests, describeFuzz } from '@msp/testkit';
import { seedEveryResource } from './support/callers';
import { startHr } from './support/hr';

async function setup() {
  // A limit high enough that the fuzzer measures the routes, not the rate limiter.
  const hr = await startHr({ settings: { rateLimitPerMinute: 10_000_000 } });
  const auth = `Bearer ${hr.token({ scope: 'read:hr write:hr read:payroll admin:tenant' })}`;
  await seedEveryResource(hr, auth);
  return { app: hr.app, auth, databaseUrl: hr.databaseUrl, replica: () => hr.replica(), close: () => hr.close() };
}

describeFuzz({ service: 'hr', setup });
describeConditionalRequests({ service: 'hr', setup });
