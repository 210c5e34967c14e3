import { describeTenantWall } from '@msp/testkit';
import { seedEveryResource } from './support/callers';
import { startHr } from './support/hr';

describeTenantWall({
  service: 'hr',
  async setup() {
    const hr = await startHr();
    const scope = 'read:hr write:hr read:payroll admin:tenant';
    const ownerAuth = `Bearer ${hr.token({ scope })}`;
    const otherAuth = `Bearer ${hr.token({ scope })}`;
    // Both tenants hold an employee with a sheet and a leave, so B's lists are not trivially empty.
    for (const auth of [ownerAuth, otherAuth]) await seedEveryResource(hr, auth);
    return { app: hr.app, ownerAuth, otherAuth, close: () => hr.close() };
  },
});
