import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import request from 'supertest';
import winston from 'winston';
import { createLogger, runAs } from '../src';
import { kitApp } from './support';

/** A logger whose lines are collected as written (one JSON document per line). */
function collected() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  return { logger: createLogger({ service: 'kit', stream }), lines };
}

const flushed = () => new Promise((resolve) => setImmediate(resolve));

describe('log lines', () => {
  test('When a line is logged inside a request, then it is one JSON document with the service, level, message, request id and an ISO timestamp', async () => {
    const { logger, lines } = collected();
    const before = Date.now();
    runAs({ client_id: 'c1', on_behalf_of: null }, () => logger.info('request', { method: 'GET', status: 200 }));
    await flushed();
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toEqual({
      service: 'kit',
      level: 'info',
      message: 'request',
      method: 'GET',
      status: 200,
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Date.parse(line.timestamp)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(line.timestamp)).toBeLessThanOrEqual(Date.now());
  });

  test('When lines are logged in different milliseconds, then each carries its own time', async () => {
    const { logger, lines } = collected();
    logger.info('first');
    await new Promise((resolve) => setTimeout(resolve, 5));
    logger.info('second');
    await flushed();
    const [first, second] = lines.map((line) => Date.parse(JSON.parse(line).timestamp));
    expect(second! - first!).toBeGreaterThanOrEqual(4);
  });

  test('When a line carries secrets, then their values are redacted at any depth', async () => {
    const { logger, lines } = collected();
    logger.warn('login', {
      client_secret: 's3cret',
      nested: { authorization: 'Bearer x', keep: 'me' },
      list: [{ password: 'p' }],
    });
    await flushed();
    expect(lines.join('\n')).not.toMatch(/s3cret|Bearer x|"p"/);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      client_secret: '[redacted]',
      nested: { authorization: '[redacted]', keep: 'me' },
      list: [{ password: '[redacted]' }],
    });
  });

  test('When a line holds what JSON.stringify cannot write (a BigInt, a circular reference), then it is still one JSON document', async () => {
    const { logger, lines } = collected();
    const circular: Record<string, unknown> = { name: 'loop' };
    circular.self = circular;
    logger.info('odd values', { count: 12345678901234567890n, circular });
    await flushed();
    const line = JSON.parse(lines[0]!);
    expect(line.count).toBe('12345678901234567890');
    // Redaction copies the first levels; where the copy stops, the reference is marked circular.
    expect(line.circular).toMatchObject({ name: 'loop', self: { name: 'loop' } });
    expect(JSON.stringify(line.circular)).toContain('"[Circular]"');
    expect(line.message).toBe('odd values');
  });

  test('When an error is logged, then its message and stack are in the line', async () => {
    const { logger, lines } = collected();
    logger.error('failed', { error: 'x' });
    logger.error(new Error('boom'));
    await flushed();
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', message: 'failed', error: 'x' });
    expect(JSON.parse(lines[1]!)).toMatchObject({
      level: 'error',
      message: 'boom',
      stack: expect.stringContaining('Error: boom'),
    });
  });
});

describe('the transports', () => {
  test("When a transport is added to a running service's logger, then it receives every line from then on, the request lines included", async () => {
    const { app, logger, logs: lines } = kitApp();
    const stream = new PassThrough();
    const added: Record<string, unknown>[] = [];
    stream.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        added.push(JSON.parse(line) as Record<string, unknown>);
    });
    logger.add(new winston.transports.Stream({ stream }));
    logger.info('after the transport was added', { step: 1 });
    const thing = await request(app).get('/api/v1/things/1').set('Authorization', 'Bearer c1:read:things');
    const missing = await request(app).get('/api/v1/things/404').set('Authorization', 'Bearer c1:read:things');
    expect([thing.status, missing.status]).toEqual([200, 404]);
    await flushed();
    const summary = (line: Record<string, unknown>) => [line.message, line.path, line.status, line.level];
    expect(added.map(summary)).toEqual([
      ['after the transport was added', undefined, undefined, 'info'],
      ['request', '/api/v1/things/1', 200, 'info'],
      ['request', '/api/v1/things/404', 404, 'info'],
    ]);
    // The added transport gets the same lines, request id and redaction included, as the service's own.
    const own = lines.filter((line) => line.message === 'request' || line.message === 'after the transport was added');
    expect(own.map(summary)).toEqual(added.map(summary));
    expect(added[1]!.request_id).toBe(thing.headers['x-request-id']);
    expect(added[1]).toEqual(own[1]);
  });

  test('When the level is off or the logger silent, then no request line is written', async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    const logger = createLogger({ service: 'kit', level: 'warn', stream });
    logger.log('info', 'request', { status: 200 });
    logger.log('error', 'request', { status: 500 });
    logger.silent = true;
    logger.log('error', 'request', { status: 502 });
    await flushed();
    expect(lines.map((line) => JSON.parse(line).status)).toEqual([500]);
  });
});

describe('writing the lines', () => {
  /** A stream that records each write it is given. */
  function recordingStream() {
    const writes: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        writes.push(chunk.toString());
        done();
      },
    });
    return { stream, writes };
  }

  test('When lines are logged in one turn of the event loop, then they leave in one write, in order, at its end', async () => {
    const { stream, writes } = recordingStream();
    const logger = createLogger({ service: 'kit', stream });
    for (const n of [1, 2, 3]) logger.info(`line ${n}`);
    expect(writes).toEqual([]);

    await flushed();
    expect(writes).toHaveLength(1);
    expect(
      writes[0]!
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line).message),
    ).toEqual(['line 1', 'line 2', 'line 3']);

    logger.info('line 4');
    await flushed();
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1]!).message).toBe('line 4');
  });

  test('When more than 64 KiB are waiting, then they are written at once', () => {
    const { stream, writes } = recordingStream();
    const logger = createLogger({ service: 'kit', stream });
    logger.info('large', { text: 'x'.repeat(70_000) });
    expect(writes).toHaveLength(1);
    expect(JSON.parse(writes[0]!)).toMatchObject({ message: 'large' });
  });

  test('When the process exits in the turn its lines were logged in, then they are written before it ends', () => {
    // A process of its own: log three lines, then process.exit() at once, as a fatal start-up error does.
    const script = `
      const ts = require('typescript');
      require.extensions['.ts'] = (mod, file) =>
        mod._compile(
          ts.transpileModule(require('fs').readFileSync(file, 'utf8'), {
            compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
          }).outputText,
          file,
        );
      const { BatchedLines, MESSAGE } = require(${JSON.stringify(path.join(__dirname, '../src/log-lines.ts'))});
      const lines = new BatchedLines(process.stdout);
      for (const n of [1, 2, 3]) lines.log({ [MESSAGE]: 'line ' + n }, () => undefined);
      process.exit(3);
    `;
    const child = spawnSync(process.execPath, ['-e', script], { cwd: path.join(__dirname, '..'), encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(3);
    expect(child.stdout).toBe('line 1\nline 2\nline 3\n');
  });

  test('When a line past 64 KiB was written at once and more follow in the same turn, then those are written too if the process exits', () => {
    const script = `
      const ts = require('typescript');
      require.extensions['.ts'] = (mod, file) =>
        mod._compile(
          ts.transpileModule(require('fs').readFileSync(file, 'utf8'), {
            compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
          }).outputText,
          file,
        );
      const { BatchedLines, MESSAGE } = require(${JSON.stringify(path.join(__dirname, '../src/log-lines.ts'))});
      const lines = new BatchedLines(process.stdout);
      lines.log({ [MESSAGE]: 'before' }, () => undefined);
      lines.log({ [MESSAGE]: 'x'.repeat(70000) }, () => undefined);
      lines.log({ [MESSAGE]: 'after' }, () => undefined);
      process.exit(0);
    `;
    const child = spawnSync(process.execPath, ['-e', script], {
      cwd: path.join(__dirname, '..'),
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe(`before\n${'x'.repeat(70000)}\nafter\n`);
  });
});
