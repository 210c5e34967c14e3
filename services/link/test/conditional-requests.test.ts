import { describeConditionalRequests } from '@msp/testkit';
import { startSeededLink } from './support/seeded-link';

// A file of its own: the SCIM directory of the harness is one per test file.
describeConditionalRequests({
  service: 'link',
  async setup() {
    const h = await startSeededLink();
    return { app: h.link.app, auth: h.auth, close: () => h.close() };
  },
});
