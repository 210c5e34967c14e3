import { startServer } from '../src';
import { kitApp } from './support';

describe('startServer', () => {
  test("When the service's app runs under startServer, then its API answers as under any server", async () => {
    const { app, logger } = kitApp();
    const running = await startServer({ app, port: 0, host: '127.0.0.1', logger });
    try {
      const base = `http://127.0.0.1:${running.port}`;
      const thing = await fetch(`${base}/api/v1/things/1`, { headers: { authorization: 'Bearer c1:read:things' } });
      expect(thing.status).toBe(200);
      expect(thing.headers.get('etag')).toMatch(/^"/);
      expect(thing.headers.get('x-ratelimit-remaining')).not.toBeNull();
      const missing = await fetch(`${base}/api/v1/nothing-here`, {
        headers: { authorization: 'Bearer c1:read:things' },
      });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    } finally {
      await running.close();
    }
  });
});
