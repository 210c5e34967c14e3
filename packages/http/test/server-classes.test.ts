import http from 'node:http';
import express from 'express';
import { serverClassesFor, serverClassesPay, startServer } from '../src';
import { kitApp } from './support';

// On Node 20 and 22 startServer builds each request and response with the app's prototypes already
// in place, so Express's per-request Object.setPrototypeOf changes nothing (the cost it saves, and
// why not on Node 24: serverClassesPay, bench/README.md). The API test below runs on whichever Node
// runs the tests: CI's 20 takes the classes, the images' 24 (pnpm test:deploy) the plain server.
describe('serverClassesFor', () => {
  test('When a server of the app serves a request, then req and res have the app\'s prototypes from birth and are still Node\'s', async () => {
    const app = express();
    const seen: { sameRequest: boolean; sameResponse: boolean; nodeRequest: boolean; nodeResponse: boolean }[] = [];
    const server = http.createServer(serverClassesFor(app), (req, res) => {
      // Before Express has touched them.
      seen.push({
        sameRequest: Object.getPrototypeOf(req) === app.request,
        sameResponse: Object.getPrototypeOf(res) === app.response,
        nodeRequest: req instanceof http.IncomingMessage,
        nodeResponse: res instanceof http.ServerResponse,
      });
      app(req as express.Request, res as express.Response);
    });
    app.get('/hello', (req, res) => {
      res.set('X-Path', req.path).json({ hello: req.query.name });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}/hello?name=desk`);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-path')).toBe('/hello');
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await response.json()).toEqual({ hello: 'desk' });
      expect(seen).toEqual([{ sameRequest: true, sameResponse: true, nodeRequest: true, nodeResponse: true }]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('startServer uses them on the Node versions where they were measured to pay (20, 22), not on 24 and later', () => {
    expect([20, 22, 24, 26].map((major) => serverClassesPay(major))).toEqual([true, true, false, false]);
  });

  test('When the service\'s app runs under startServer, then its API answers as under any server', async () => {
    const { app, logger } = kitApp();
    const running = await startServer({ app, port: 0, host: '127.0.0.1', logger });
    try {
      const base = `http://127.0.0.1:${running.port}`;
      const thing = await fetch(`${base}/api/v1/things/1`, { headers: { authorization: 'Bearer c1:read:things' } });
      expect(thing.status).toBe(200);
      expect(thing.headers.get('etag')).toMatch(/^"/);
      expect(thing.headers.get('x-ratelimit-remaining')).not.toBeNull();
      const missing = await fetch(`${base}/api/v1/nothing-here`, { headers: { authorization: 'Bearer c1:read:things' } });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    } finally {
      await running.close();
    }
  });
});
