import client from 'prom-client';
import type { Request, RequestHandler, Response } from 'express';

export interface HttpMetrics {
  registry: client.Registry;
  /** Counts a finished request and its duration (called by the app's one per-request hook, app.ts). */
  observe: (req: Request, res: Response, seconds: number) => void;
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

  const observe = (req: Request, res: Response, seconds: number) => {
    // The route pattern, never the raw URL: ids would explode the label set. A router's root
    // route ('/' of the router mounted at /api/v1/tickets) is the mount path itself.
    const path = (req.route as { path?: string } | undefined)?.path;
    const route = !path ? 'unmatched' : path === '/' && req.baseUrl ? req.baseUrl : `${req.baseUrl}${path}`;
    const labels = { method: req.method, route, status: String(res.statusCode) };
    requests.inc(labels);
    duration.observe(labels, seconds);
  };

  const handler: RequestHandler = async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  };

  return { registry, observe, handler };
}
