import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { describeTenantWall } from '@msp/testkit';
import { startSeededLink } from './support/seeded-link';

describeTenantWall({
  service: 'link',
  async setup() {
    // Tenant A (the harness's desk tenant) holds one of everything; tenant B, another desk
    // tenant, a managed tenant of its own.
    const h = await startSeededLink();
    const other = await h.desk.newTenant();
    const otherAuth = `Bearer ${h.link.token({ tenant_id: other.tenantId })}`;
    const otherClient = await other.createClient();
    const created = await request(h.link.app)
      .post('/api/v1/tenants')
      .set('Authorization', otherAuth)
      .send({
        name: 'Fabrikam M365',
        domain: `f${randomBytes(4).toString('hex')}.example.com`,
        client_id: otherClient.id,
      });
    if (created.status !== 201) throw new Error(`tenant B: ${created.status}`);
    return { app: h.link.app, ownerAuth: h.auth, otherAuth, close: () => h.close() };
  },
});
