import type * as HttpModule from '../src';
import { groupDigits } from '../src';

/*
 * ICU (Intl, and what Number, Date and String do with a locale) lives in the node binary: the
 * first call that needs it brings its code and data into memory, and they stay resident. Loading
 * @msp/http, which every service does at start, once cost each service resident memory that way for
 * one string of its docs (`MAX_PAGE.toLocaleString('en')`; docs/performance.md, "Memory").
 */
describe('what loading @msp/http asks of ICU', () => {
  test('When the package is loaded and its docs are written, then nothing in it calls Intl or a locale-aware method; the docs still write 1,000,000', () => {
    const calls: string[] = [];
    const restore: (() => void)[] = [];
    const watch = <T extends object>(owner: T, name: keyof T & string, label: string) => {
      const original = owner[name];
      restore.push(() => {
        owner[name] = original;
      });
      owner[name] = new Proxy(original as unknown as (...args: unknown[]) => unknown, {
        apply(target, self, args) {
          calls.push(label);
          return Reflect.apply(target, self, args);
        },
        construct(target, args) {
          calls.push(label);
          return Reflect.construct(target, args) as object;
        },
      }) as unknown as T[typeof name];
    };
    watch(Number.prototype, 'toLocaleString', 'Number#toLocaleString');
    watch(Date.prototype, 'toLocaleString', 'Date#toLocaleString');
    watch(Date.prototype, 'toLocaleDateString', 'Date#toLocaleDateString');
    watch(String.prototype, 'localeCompare', 'String#localeCompare');
    for (const name of ['NumberFormat', 'DateTimeFormat', 'Collator', 'PluralRules', 'Segmenter'] as const)
      watch(Intl, name, `Intl.${name}`);
    try {
      let loaded: typeof HttpModule | undefined;
      jest.isolateModules(() => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        loaded = require('../src') as typeof HttpModule;
      });
      expect(calls).toEqual([]);
      expect(loaded!.MAX_PAGE_TEXT).toBe('1,000,000');
      expect(loaded!.pageQueryProperties.page.description).toBe('Page number, 1–1,000,000.');
    } finally {
      for (const undo of restore) undo();
    }
  });
});

describe('groupDigits', () => {
  test.each([
    [0, '0'],
    [999, '999'],
    [1_000, '1,000'],
    [12_345, '12,345'],
    [100_000, '100,000'],
    [1_000_000, '1,000,000'],
    [1_234_567_890, '1,234,567,890'],
  ])('When %d is written for the docs, then it reads %s, as (n).toLocaleString("en") writes it', (value, text) => {
    expect(groupDigits(value)).toBe(text);
    expect(groupDigits(value)).toBe(value.toLocaleString('en'));
  });
});
