import fs from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';

/*
 * The API reference page: Swagger UI, served from the swagger-ui-dist npm package's own files by
 * the service itself. Customers run air-gapped, so nothing is fetched from elsewhere: no CDN, no
 * web font, and the one outside call Swagger UI makes by default (the validator badge on
 * validator.swagger.io) is switched off. The Content-Security-Policy states exactly that: scripts,
 * styles and the document from this origin; XHR to this origin and to desk's token endpoint (the
 * OAuth2 client-credentials "Authorize" of the page).
 */

const DIST = path.dirname(require.resolve('swagger-ui-dist/package.json'));
// Only the files the page loads; the rest of the package (source maps, other bundles) stays unserved.
const ASSETS: Record<string, string> = {
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const escape = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The page's policy: only what Swagger UI needs, plus the token endpoint's origin for "Authorize". */
export function docsContentSecurityPolicy(tokenUrl: string): string {
  const tokenOrigin = new URL(tokenUrl).origin;
  return [
    "default-src 'none'",
    "script-src 'self'",
    // Swagger UI (React) sets inline style attributes on the elements it renders.
    "style-src 'self' 'unsafe-inline'",
    // The stylesheet's icons are data: SVGs.
    "img-src 'self' data:",
    `connect-src 'self' ${tokenOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

// The page itself and its start-up script: no inline script, so script-src needs no 'unsafe-inline'.
// Paths are relative to /api/v1/docs, so the page also works under an ingress path prefix.
function page(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} – API reference</title>
<link rel="icon" type="image/png" href="docs/favicon-32x32.png">
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`;
}

const INIT = `'use strict';
window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  // Off: it would send the document to validator.swagger.io.
  validatorUrl: null,
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  defaultModelExpandDepth: 5,
  defaultModelRendering: 'example',
  displayOperationId: true,
  displayRequestDuration: true,
  showExtensions: false,
  filter: true,
  tryItOutEnabled: true,
  // Off: a ?configUrl= in the address would load settings from elsewhere.
  queryConfigEnabled: false,
  persistAuthorization: false,
  requestSnippetsEnabled: true,
  requestSnippets: {
    generators: {
      curl_bash: { title: 'curl (bash)', syntax: 'bash' },
      curl_powershell: { title: 'curl (PowerShell)', syntax: 'powershell' },
      curl_cmd: { title: 'curl (CMD)', syntax: 'bash' },
    },
    defaultExpanded: true,
  },
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

// Read once per process (the Swagger UI bundle is large), however many apps are created (tests create many), and only
// when the first file is asked for: a service that nobody opens the docs of never holds them.
let loaded: Map<string, { type: string; body: Buffer }> | undefined;
function assets() {
  loaded ??= new Map(
    Object.entries(ASSETS).map(([name, type]) => [name, { type, body: fs.readFileSync(path.join(DIST, name)) }]),
  );
  return loaded;
}

/**
 * GET /docs (the page) and /docs/* (its files), to be mounted at `/docs` of the API router: a
 * request for anything else passes it with one path check instead of walking its routes.
 */
export function createDocsRouter(options: { title: string; tokenUrl: string }): Router {
  const router = express.Router();
  const html = page(options.title);
  const csp = docsContentSecurityPolicy(options.tokenUrl);

  router.get('/', (req, res) => {
    // The page's links are relative to /docs; under /docs/ they would miss, so that address redirects.
    if (req.originalUrl.split('?')[0]!.endsWith('/')) return res.redirect(301, '../docs');
    res
      .set({ 'Content-Security-Policy': csp, 'Cache-Control': 'no-cache', 'Referrer-Policy': 'no-referrer' })
      .type('html')
      .send(html);
  });
  router.get('/init.js', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('application/javascript; charset=utf-8').send(INIT);
  });
  router.get('/:file', (req, res, next) => {
    const file = assets().get(req.params.file);
    if (!file) return next();
    res.set({ 'Content-Type': file.type, 'Cache-Control': 'public, max-age=3600' }).send(file.body);
  });
  return router;
}
