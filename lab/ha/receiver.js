'use strict';
// The webhook receiver the services deliver to: an HTTP server on this machine's address in the
// lab (10.77.0.1), one path per service. It answers every delivery 204 at once and records it:
// `webhook-id` (the delivery, the same on every attempt), `webhook-timestamp` (the attempt's), the
// event's type, resource and SLA target. A delivery seen twice must then be a retry of an attempt
// the service saw fail.

const http = require('node:http');

function startReceiver({ host, port = 0 }) {
  const receipts = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      if (text.length < 1_000_000) text += chunk;
    });
    req.on('end', () => {
      let event;
      try {
        event = JSON.parse(text);
      } catch {
        event = undefined;
      }
      const object = event && event.data && event.data.object;
      receipts.push({
        at: Date.now(),
        service: req.url.replace(/^\//, '').split(/[/?]/)[0],
        webhookId: req.headers['webhook-id'],
        timestamp: req.headers['webhook-timestamp'],
        type: event && event.type,
        objectId: object && object.id,
        target: event && event.data && (event.data.target ?? (event.data.extra && event.data.extra.target)),
        title: object && (object.title ?? object.body ?? object.name),
        raw: event ? undefined : text.slice(0, 500),
      });
      res.statusCode = 204;
      res.end();
    });
  });
  server.keepAliveTimeout = 5000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve({
        url: `http://${host}:${address.port}`,
        receipts,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

module.exports = { startReceiver };
