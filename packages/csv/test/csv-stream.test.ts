import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { coalesce, createCsvStream, neutralised } from '../src';

interface Row {
  name: string;
  minutes: number;
  note: string | null;
}

/** Streams `rows` through the writer (and the coalescer) and answers the bytes as text. */
async function csvOf(rows: Row[]): Promise<string> {
  const chunks: Buffer[] = [];
  await pipeline(
    Readable.from(rows),
    createCsvStream<Row>({ columns: ['name', 'minutes', 'note'], cells: (row) => [row.name, row.minutes, row.note] }),
    coalesce(16),
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk);
        callback();
      },
    }),
  );
  return Buffer.concat(chunks).toString('utf8');
}

describe('neutralised', () => {
  test.each([
    ['=SUM(A1:A9)', "'=SUM(A1:A9)"],
    ['+49 30 1234', "'+49 30 1234"],
    ['-1', "'-1"],
    ['@cmd', "'@cmd"],
    ['\t=1', "'\t=1"],
    ['\r=1', "'\r=1"],
  ])('When a cell starts like a formula (%j), then it gets a leading quote', (cell, expected) => {
    expect(neutralised(cell)).toBe(expected);
  });

  test.each(['Müller GmbH', '12.50', '', "'quoted", 'a=b'])(
    'When a cell does not start like a formula (%j), then it stays as it is',
    (cell) => {
      expect(neutralised(cell)).toBe(cell);
    },
  );
});

describe('createCsvStream', () => {
  test('When rows are written, then the file is the header and one CRLF-terminated record per row, quoted only where RFC 4180 needs it', async () => {
    const text = await csvOf([
      { name: 'Acme, Inc.', minutes: 90, note: 'said "urgent"' },
      { name: 'Plain', minutes: 5, note: null },
      { name: 'Two\nlines', minutes: 1, note: '' },
    ]);
    expect(text).toBe('name,minutes,note\r\n"Acme, Inc.",90,"said ""urgent"""\r\nPlain,5,\r\n"Two\nlines",1,\r\n');
  });

  test('When a cell starts like a formula, then it is written neutralised, also when it must be quoted', async () => {
    const text = await csvOf([{ name: '=HYPERLINK("http://x")', minutes: 1, note: '-2+3,4' }]);
    expect(text).toBe('name,minutes,note\r\n"\'=HYPERLINK(""http://x"")",1,"\'-2+3,4"\r\n');
  });

  test('When no row comes, then the file is the header alone', async () => {
    expect(await csvOf([])).toBe('name,minutes,note\r\n');
  });
});
