import http from 'node:http';
import { startServer } from '../src';
import { kitApp } from './support';

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe('graceful shutdown', () => {
  test('When shutdown starts during a request, then readiness fails, the request finishes, new connections are refused, and cleanup runs last', async () => {
    const { app, readiness, logger } = kitApp({ slowMs: 400 });
    const events: string[] = [];
    const running = await startServer({
      app,
      port: 0,
      host: '127.0.0.1',
      logger,
      readiness,
      shutdownTimeoutMs: 5000,
      cleanup: [async () => void events.push('cleanup')],
    });

    running.server.on('request', (_req, res) => res.on('finish', () => events.push('response')));
    const inFlight = get(running.port, '/api/v1/slow');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = running.close().then(() => events.push('closed'));

    expect(readiness.isShuttingDown()).toBe(true);
    const response = await inFlight;
    expect(response).toEqual({ status: 200, body: '{"done":true}' });
    await closed;
    expect(events).toEqual(['response', 'cleanup', 'closed']);
    await expect(get(running.port, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
  });

  test('When a request outlasts the shutdown timeout, then its connection is cut and shutdown still completes', async () => {
    const { app, readiness, logger } = kitApp({ slowMs: 1500 });
    const running = await startServer({ app, port: 0, host: '127.0.0.1', logger, readiness, shutdownTimeoutMs: 200 });
    const inFlight = get(running.port, '/api/v1/slow');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await running.close();
    expect(Date.now() - started).toBeLessThan(1200);
    await expect(inFlight).rejects.toThrow(/socket hang up|ECONNRESET/);
  });
});
