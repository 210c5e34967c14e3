import { describeTenantWall } from '@msp/testkit';
import { startDesk } from './support/desk';
import { newTenant, seedEveryResource } from './support/helpdesk';

describeTenantWall({
  service: 'desk',
  async setup() {
    const desk = await startDesk();
    const owner = await newTenant(desk);
    const other = await newTenant(desk);
    // Both tenants hold one of everything, so B's lists are not trivially empty.
    await seedEveryResource(desk, owner.token);
    await seedEveryResource(desk, other.token);
    return {
      app: desk.app,
      ownerAuth: `Bearer ${owner.token}`,
      otherAuth: `Bearer ${other.token}`,
      close: () => desk.close(),
    };
  },
});
