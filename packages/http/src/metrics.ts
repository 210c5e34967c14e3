import client from 'prom-client';
import type { RequestHandler } from 'express';

export interface HttpMetrics {
  registry: client.Registry;
  middleware: RequestHandler;
  handler: RequestHandler;
}

/** A registry per app, so several apps (tests, one process) never share or clash on metrics. */
export function createHttpMetrics(service: string): HttpMetrics {
  const registry = new client.Registry();
  registry.setDefaultLabels({ service });
  client.collectDefaultMetrics({ register: registry });
  const requests = new client.Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  const middleware: RequestHandler = (req, res, next) => {
    const end = duration.startTimer();
    res.on('finish', () => {
      // The route pattern, never the raw URL: ids would explode the label set. A router's root
      // route ('/' of the router mounted at /api/v1/tickets) is the mount path itself.
      const path = req.route?.path;
      const route = !path ? 'unmatched' : path === '/' && req.baseUrl ? req.baseUrl : `${req.baseUrl}${path}`;
      const labels = { method: req.method, route, status: String(res.statusCode) };
      requests.inc(labels);
      end(labels);
    });
    next();
  };

  const handler: RequestHandler = async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  };

  return { registry, middleware, handler };
}
