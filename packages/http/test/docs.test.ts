import fs from 'node:fs';
import express from 'express';
import request from 'supertest';
import type * as DocsModule from '../src/docs';
import { kitApp } from './support';

// The kit's token URL is http://localhost/token: the page may reach that origin and its own, nothing else.
describe('GET /api/v1/docs', () => {
  const { app } = kitApp();

  test('When the page is read, then it is Swagger UI from this service alone, under a policy that allows exactly that and the token endpoint', async () => {
    const response = await request(app).get('/api/v1/docs');

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html; charset=utf-8/);
    expect(response.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
        "connect-src 'self' http://localhost; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(response.text).toContain('<title>Kit – API reference</title>');
    expect(response.text).toContain('<script src="docs/swagger-ui-bundle.js"></script>');
    expect(response.text).toContain('<link rel="stylesheet" href="docs/swagger-ui.css">');
    // No inline script (the CSP forbids it) and no address of another site.
    expect(response.text).not.toMatch(/<script>|<script [^>]*>[^<]/);
    expect(response.text).not.toMatch(/https?:\/\//);
  });

  test('When the page is asked for with a trailing slash, then it redirects to the address its relative links work from', async () => {
    const response = await request(app).get('/api/v1/docs/');

    expect(response.status).toBe(301);
    expect(response.headers.location).toBe('../docs');
  });

  test("When the start-up script is read, then it loads the service's own document with the outside validator switched off and curl samples on", async () => {
    const response = await request(app).get('/api/v1/docs/init.js');

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/javascript/);
    expect(response.text).toContain("url: 'openapi.json'");
    expect(response.text).toContain('validatorUrl: null');
    expect(response.text).toContain('requestSnippetsEnabled: true');
    expect(response.text).toContain('curl_bash');
    expect(response.text).not.toMatch(/https?:\/\//);
  });

  test('When the bundle, stylesheet and icon are read, then they come from swagger-ui-dist with their types', async () => {
    const bundle = await request(app).get('/api/v1/docs/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toMatch(/^application\/javascript/);
    expect(bundle.text).toContain('SwaggerUIBundle');

    const css = await request(app).get('/api/v1/docs/swagger-ui.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    // Its images are data: URIs; it loads no font or image from elsewhere.
    expect(css.text).not.toMatch(/url\((?!["']?data:)/);
    expect(css.text).not.toMatch(/@import|@font-face/);

    const icon = await request(app).get('/api/v1/docs/favicon-32x32.png');
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toBe('image/png');
  });

  test('When another file of the package or a path outside it is asked for, then it is a 404 problem', async () => {
    for (const path of [
      '/api/v1/docs/swagger-ui-bundle.js.map',
      '/api/v1/docs/package.json',
      '/api/v1/docs/..%2Fpackage.json',
      '/api/v1/docs/index.html',
    ]) {
      const response = await request(app).get(path);
      expect(response.status).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });
});

describe('the docs files', () => {
  test("When the docs router is created, then Swagger UI's files are not read; the first request for one reads them once", async () => {
    // docs.ts in a module registry of its own, so its cache of the files starts empty.
    const reads = jest.spyOn(fs, 'readFileSync');
    const bundleReads = () => reads.mock.calls.filter(([file]) => String(file).endsWith('swagger-ui-bundle.js')).length;
    let docs: typeof DocsModule | undefined;
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      docs = require('../src/docs') as typeof DocsModule;
    });
    const app = express().use('/docs', docs!.createDocsRouter({ title: 'Test', tokenUrl: 'http://localhost/token' }));
    expect(bundleReads()).toBe(0);
    const bundle = await request(app).get('/docs/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.text).toContain('SwaggerUIBundle');
    await request(app).get('/docs/swagger-ui-bundle.js');
    expect(bundleReads()).toBe(1);
    reads.mockRestore();
  });
});
