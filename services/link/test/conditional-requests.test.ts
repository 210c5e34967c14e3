import { describeConditionalRequests } from '@msp/testkit';
import { startSeededLink } from './support/seeded-link';

// A file of its own: the SCIM directory of the harness is one per test file.
describeConditionalRequests({
  service: 'link',
  async setup() {
    // A queue that takes jobs but runs none: a run progressing in the background would change its
    // resource (and ETag) between the suite's two reads of it, as a real change would.
    const h = await startSeededLink({ workers: false });
    return { app: h.link.app, auth: h.auth, replica: () => h.replica(), close: () => h.close() };
  },
});
