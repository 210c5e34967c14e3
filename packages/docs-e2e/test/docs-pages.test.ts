import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { clientToken, post, startStack, type ServiceName, type Stack } from './support/stack';

/*
 * Each service's API reference page (/api/v1/docs) in a real browser, Debian's chromium, driven by
 * playwright-core: it loads from the service alone (no request elsewhere, no console error, CSP
 * included), authorises with a client id and secret through desk's token endpoint (CORS for link's
 * and hr's pages), and "try it" lists a resource that the test created beforehand.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// The README's screenshots; a run against another stack (DOCS_E2E_SERVICE_URL) writes its own elsewhere.
const SCREENSHOTS = process.env.DOCS_E2E_SCREENSHOTS ?? path.resolve(__dirname, '../../../docs/screenshots');

let stack: Stack;
let browser: Browser;
/** What each service's list must show: the id of a record made through its API. */
const created: Partial<Record<ServiceName, string>> = {};

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(`No chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH`);
  stack = await startStack();
  const token = await clientToken(stack);
  const { desk, link, hr } = stack.services;
  // Unique per run: against a running stack (DOCS_E2E_SERVICE_URL) the names may exist already.
  const run = randomBytes(3).toString('hex');
  const client = await post(`${desk.apiUrl}/clients`, token, { name: `Contoso Ltd ${run}` });
  created.desk = String(
    (await post(`${desk.apiUrl}/tickets`, token, { title: 'Printer on 2nd floor jams', client_id: client.id }))['id'],
  );
  created.link = String(
    (
      await post(`${link.apiUrl}/tenants`, token, {
        name: `Contoso M365 ${run}`,
        domain: `contoso-${run}.onmicrosoft.com`,
        client_id: client.id,
      })
    )['id'],
  );
  created.hr = String(
    (
      await post(`${hr.apiUrl}/employees`, token, {
        user_id: randomUUID(),
        personnel_number: String(parseInt(run, 16)).slice(0, 8),
        name: 'Erika Mustermann',
      })
    )['id'],
  );
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

interface Watched {
  requests: string[];
  errors: string[];
}

function watch(page: Page): Watched {
  const watched: Watched = { requests: [], errors: [] };
  page.on('request', (request) => watched.requests.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error') watched.errors.push(message.text());
  });
  page.on('pageerror', (error) => watched.errors.push(error.message));
  return watched;
}

// Per page: its title, the list that is tried, and what the create operation's example and schema must show.
const LISTS: Record<ServiceName, { path: string; title: string; example: string; description: string }> = {
  desk: {
    path: '/tickets',
    title: 'Helpdesk API (desk)',
    example: 'Printer on the 2nd floor jams',
    description: 'A client of the tenant.',
  },
  link: {
    path: '/tenants',
    title: 'Integration API (link)',
    example: 'contoso.onmicrosoft.com',
    description: 'Id of the helpdesk client the directory belongs to',
  },
  hr: {
    path: '/employees',
    title: 'HR API (hr)',
    example: 'Erika Mustermann',
    description: 'The payroll number: 1–20 digits',
  },
};

describe.each(['desk', 'link', 'hr'] as const)('the %s docs page', (name) => {
  test(
    'When it is opened, authorised with a client id and secret, and a list is tried, then it shows ' +
      'a 200 with the data, and nothing left the service but the token request',
    async () => {
      const service = stack.services[name];
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const watched = watch(page);

      const response = await page.goto(`${service.apiUrl}/docs`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toContain(
        `connect-src 'self' ${new URL(stack.tokenUrl).origin}`,
      );
      await expect(page.title()).resolves.toContain(LISTS[name].title);
      await page.locator('.swagger-ui .info .title').waitFor();
      await page.locator('.opblock-tag-section').first().waitFor();
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });

      // Authorize: OAuth2 client credentials against desk's token endpoint.
      await page.locator('.scheme-container button.authorize').click();
      const modal = page.locator('.modal-ux');
      await modal.locator('input[type="text"]').first().fill(stack.client.clientId);
      await modal.locator('input[type="password"]').first().fill(stack.client.clientSecret);
      await modal.locator('.modal-ux-inner').screenshot({ path: path.join(SCREENSHOTS, `${name}-authorize.png`) });
      const token = page.waitForResponse((r) => r.url() === stack.tokenUrl && r.request().method() === 'POST');
      await modal.locator('button.modal-btn.authorize').click();
      expect((await token).status()).toBe(200);
      await modal.locator('button', { hasText: 'Logout' }).waitFor();
      await modal.locator('button.btn-done').click();

      // Try it: the list operation, sent for real with the token.
      const operation = page.locator('.opblock.opblock-get', {
        has: page.locator(`.opblock-summary-path[data-path="${LISTS[name].path}"]`),
      });
      await operation.locator('.opblock-summary-control').click();
      const listed = page.waitForResponse(
        (r) => r.url().startsWith(`${service.apiUrl}${LISTS[name].path}`) && r.request().method() === 'GET',
      );
      await operation.locator('button.execute').click();
      expect((await listed).status()).toBe(200);
      const live = operation.locator('.live-responses-table');
      await expect(live.locator('tbody .response-col_status').first().textContent()).resolves.toContain('200');
      await live.locator('.response-col_description', { hasText: created[name]! }).first().waitFor();
      const curl = await operation.locator('.curl-command').textContent();
      expect(curl).toContain(`curl -X 'GET'`);
      expect(curl).toContain(`${service.apiUrl}${LISTS[name].path}`);
      expect(curl).toContain('Authorization: Bearer ');
      // The operation from its summary down to the live response; the documented responses below it are left out.
      const top = (await operation.boundingBox())!;
      const bottom = (await live.boundingBox())!;
      const scrollY = await page.evaluate(() => window.scrollY);
      await page.screenshot({
        path: path.join(SCREENSHOTS, `${name}-try-it.png`),
        fullPage: true,
        clip: { x: top.x, y: top.y + scrollY, width: top.width, height: bottom.y + bottom.height - top.y },
      });

      // The create operation: its request body shows the schema's example, and its schema the fields' descriptions.
      const create = page.locator('.opblock.opblock-post', {
        has: page.locator(`.opblock-summary-path[data-path="${LISTS[name].path}"]`),
      });
      await create.locator('.opblock-summary-control').click();
      const body = create.locator('.opblock-section-request-body');
      // "Try it out" is on, so the example is the editable body.
      await expect(body.locator('textarea.body-param__text').inputValue()).resolves.toContain(LISTS[name].example);
      await body.locator('[data-name="model"]').first().click();
      await body.locator('.model-box', { hasText: LISTS[name].description }).first().waitFor();
      await create
        .locator('.responses-wrapper .response[data-code="201"]', { hasText: LISTS[name].example })
        .first()
        .waitFor();

      const elsewhere = watched.requests.filter(
        (url) => !url.startsWith(`${service.origin}/`) && url !== stack.tokenUrl,
      );
      expect(elsewhere).toEqual([]);
      expect(watched.requests).toContain(stack.tokenUrl);
      expect(watched.errors).toEqual([]);
      await context.close();
    },
  );
});
