import { stripVTControlCharacters } from 'node:util';
import { formatPostgresLine, formatServiceLine, type LineStyle } from '../src/log-format';

const plain: LineStyle = { format: 'pretty', color: false, labelWidth: 8 };
const time = new Date(2025, 0, 2, 13, 4, 5, 67).getTime();

describe('formatServiceLine', () => {
  test('When a service logs a pino JSON line, then it reads as time, level, message and the remaining fields', () => {
    const line = JSON.stringify({
      level: 30,
      time,
      pid: 1,
      hostname: 'h',
      msg: 'request completed',
      request_id: 'abc',
      status: 200,
      path: '/api/v1/tickets',
    });
    expect(formatServiceLine('desk', line, plain)).toEqual([
      'desk     | 13:04:05.067 INFO  request completed request_id=abc status=200 path=/api/v1/tickets',
    ]);
  });

  test('When a field holds spaces or an object, then it is quoted JSON', () => {
    const line = JSON.stringify({
      level: 'warn',
      time: new Date(time).toISOString(),
      message: 'slow',
      query: 'select 1',
      extra: { a: 1 },
    });
    expect(formatServiceLine('hr', line, plain)).toEqual([
      'hr       | 13:04:05.067 WARN  slow query="select 1" extra={"a":1}',
    ]);
  });

  test('When an error is logged, then its message is inline and its stack follows', () => {
    const line = JSON.stringify({
      level: 50,
      time,
      msg: 'boom',
      err: { type: 'Error', message: 'bad', stack: 'Error: bad\n    at a (x.js:1:1)\n    at b (y.js:2:2)' },
    });
    expect(formatServiceLine('link', line, plain)).toEqual([
      'link     | 13:04:05.067 ERROR boom err="bad"',
      'link     |     at a (x.js:1:1)',
      'link     |     at b (y.js:2:2)',
    ]);
  });

  test('When winston logs an error with a top-level stack, then the stack follows the line', () => {
    const line = JSON.stringify({
      level: 'error',
      message: 'desk failed',
      service: 'desk',
      timestamp: new Date(time).toISOString(),
      stack: 'Error: x\n    at c (z.js:3:3)',
    });
    expect(formatServiceLine('desk', line, plain)).toEqual([
      'desk     | 13:04:05.067 ERROR desk failed',
      'desk     |     at c (z.js:3:3)',
    ]);
  });

  test('When a line is not JSON, then it is printed as it is', () => {
    expect(formatServiceLine('desk', 'Debugger listening on ws://...', plain)).toEqual([
      'desk     | Debugger listening on ws://...',
    ]);
    expect(formatServiceLine('desk', '{not json', plain)).toEqual(['desk     | {not json']);
  });

  test('When the json format is chosen, then lines are untouched apart from the prefix', () => {
    const line = JSON.stringify({ level: 30, msg: 'x' });
    expect(formatServiceLine('desk', line, { ...plain, format: 'json' })).toEqual([`desk     | ${line}`]);
  });

  test('When colour is on, then the prefix is coloured and the text is the same', () => {
    const [colored] = formatServiceLine('desk', 'hello', { ...plain, color: true });
    expect(colored).toContain('\u001b[36m');
    expect(stripVTControlCharacters(colored ?? '')).toBe('desk     | hello');
  });
});

describe('formatPostgresLine', () => {
  test('When PostgreSQL logs, then the date, zone and pid are dropped and the severity is a level', () => {
    expect(
      formatPostgresLine(
        '2025-01-02 13:04:05.678 UTC [123] LOG:  database system is ready to accept connections',
        plain,
      ),
    ).toBe('postgres | 13:04:05 INFO  database system is ready to accept connections');
    expect(formatPostgresLine('2025-01-02 13:04:05.678 UTC [9] FATAL:  password authentication failed', plain)).toBe(
      'postgres | 13:04:05 FATAL password authentication failed',
    );
  });

  test('When a line has another shape (a continuation), then it is kept', () => {
    expect(formatPostgresLine('\tDETAIL:  something', plain)).toBe('postgres | \tDETAIL:  something');
  });
});
