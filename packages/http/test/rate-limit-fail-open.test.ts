import request from 'supertest';
import { createRedis } from '../src';
import { kitApp } from './support';

describe('rate limiter when Redis is unreachable', () => {
  test('When the Redis server is down, then requests are still served (fail open) and the failure is logged', async () => {
    // Nothing listens on port 1: every command fails at once.
    const first = kitApp();
    const redis = createRedis('redis://127.0.0.1:1', first.logger);
    const { app, logs } = kitApp({ redis, limit: 2 });
    try {
      for (let i = 0; i < 4; i += 1) {
        const response = await request(app).get('/api/v1/things').set('Authorization', 'Bearer alice:read:things');
        expect(response.status).toBe(200);
      }
      expect(logs.some((line) => line.message === 'rate limiter store failed; serving without a limit')).toBe(true);
    } finally {
      redis.disconnect();
    }
  });
});
