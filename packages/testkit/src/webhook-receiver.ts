import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A real HTTP endpoint for webhook tests: it records every request (headers and the raw body, as
 * a receiver verifying signatures needs it) and answers as the test says.
 */

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real HTTP receiver. `answer` decides each request's fate: a status, or 'hang' (never answers).
 */
export async function startWebhookReceiver(answer: (request: Received, index: number) => number | 'hang' = () => 200) {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const request = { headers: req.headers, body, at: Date.now() };
      received.push(request);
      waiters.splice(0).forEach((wake) => wake());
      const outcome = answer(request, received.length - 1);
      if (outcome === 'hang') return;
      res.writeHead(outcome, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    /** Resolves once `count` requests arrived (or rejects after `ms`). */
    async waitFor(count: number, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} requests, got ${received.length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
