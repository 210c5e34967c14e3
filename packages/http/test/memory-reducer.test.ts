import { Type } from '@sinclair/typebox';
import { commonConfigProperties, createHttpMetrics, DEFAULT_MEMORY_TARGET_MB, loadConfig, memoryReductions, startMemoryReducer, type CollectGarbage } from '../src';
import { capturedLogger } from './support';

const MB = 1_048_576;
const captureLogger = () => capturedLogger('test', 'info');

/**
 * A process whose RSS the test sets, and a collector that gives back what the test says. What V8's
 * own collector gives back is checked on the images' Node, in the container (scripts/docker/e2e.js:
 * the Node of these tests may be another, and runs without --expose-gc).
 */
function fakeProcess(rssMb: number) {
  const state = { rss: rssMb * MB, clock: 0, freesMb: 30, pauseMs: 100, calls: [] as unknown[] };
  const gc: CollectGarbage = (options) => {
    state.calls.push(options);
    state.clock += state.pauseMs;
    state.rss -= state.freesMb * MB;
  };
  return { state, gc, rss: () => state.rss, now: () => state.clock };
}

describe('the memory reducer', () => {
  test('When RSS passes the target, then one last-resort collection runs, is logged with its pause, and counted for /metrics; under the target nothing runs', async () => {
    const { logger, lines } = captureLogger();
    const fake = fakeProcess(140);
    const before = { ...memoryReductions };
    const reducer = startMemoryReducer({ targetBytes: 135 * MB, logger, gc: fake.gc, rss: fake.rss, now: fake.now, intervalMs: 60_000 })!;
    try {
      expect(reducer.check()).toBe(true);
      expect(fake.state.calls).toEqual([{ type: 'major', flavor: 'last-resort' }]);
      fake.state.clock += 60_000;
      expect(reducer.check()).toBe(false); // 110 MB now: under the target
      expect(fake.state.calls).toHaveLength(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(lines).toEqual([
        expect.objectContaining({ message: 'memory reduced', level: 'info', rss_before_mb: 140, rss_after_mb: 110, target_mb: 135, pause_ms: 100, next_in_s: 15 }),
      ]);
      expect(memoryReductions.count - before.count).toBe(1);
      expect(memoryReductions.pauseSeconds - before.pauseSeconds).toBeCloseTo(0.1);
      expect(memoryReductions.freedBytes - before.freedBytes).toBe(30 * MB);

      const metrics = createHttpMetrics('test');
      const text = await metrics.registry.metrics();
      expect(text).toMatch(new RegExp(`^memory_reductions_total\\{service="test"\\} ${memoryReductions.count}$`, 'm'));
      expect(text).toMatch(/^memory_reduction_pause_seconds_total\{service="test"\} [0-9.]+$/m);
      expect(text).toMatch(new RegExp(`^memory_reduction_freed_bytes_total\\{service="test"\\} ${memoryReductions.freedBytes}$`, 'm'));
    } finally {
      reducer.stop();
    }
  });

  test('When RSS stays over the target, then collections are at least the gap apart, and the gap doubles up to its bound while one does not bring RSS under the target', () => {
    const { logger } = captureLogger();
    const fake = fakeProcess(200);
    fake.state.freesMb = 0; // live memory or memory outside V8: a collection gives nothing back
    fake.state.pauseMs = 0;
    const reducer = startMemoryReducer({ targetBytes: 135 * MB, logger, gc: fake.gc, rss: fake.rss, now: fake.now, minGapMs: 15_000, maxGapMs: 60_000, intervalMs: 60_000 })!;
    try {
      const ranAt: number[] = [];
      for (let second = 0; second <= 300; second += 1) {
        fake.state.clock = second * 1000;
        if (reducer.check()) ranAt.push(second);
      }
      // 15 s after the first, then 30, then 60 (the bound), then every 60.
      expect(ranAt).toEqual([0, 30, 90, 150, 210, 270]);
    } finally {
      reducer.stop();
    }
  });

  test('When a collection brings RSS under the target again, then the gap is back to its least', () => {
    const { logger } = captureLogger();
    const fake = fakeProcess(200);
    fake.state.freesMb = 0;
    const reducer = startMemoryReducer({ targetBytes: 135 * MB, logger, gc: fake.gc, rss: fake.rss, now: fake.now, minGapMs: 15_000, maxGapMs: 600_000, intervalMs: 60_000 })!;
    try {
      expect(reducer.check()).toBe(true); // at 0: gap 30 s now
      fake.state.clock = 30_100;
      fake.state.freesMb = 100;
      expect(reducer.check()).toBe(true); // 200 -> 100 MB: gap back to 15 s
      fake.state.rss = 140 * MB;
      fake.state.clock += 14_000;
      expect(reducer.check()).toBe(false);
      fake.state.clock += 1_000;
      expect(reducer.check()).toBe(true);
    } finally {
      reducer.stop();
    }
  });

  test('When the target is 0, or node runs without --expose-gc, then no reducer starts', () => {
    const { logger } = captureLogger();
    const fake = fakeProcess(500);
    expect(startMemoryReducer({ targetBytes: 0, logger, gc: fake.gc, rss: fake.rss })).toBeUndefined();
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined(); // jest runs node without --expose-gc
    expect(startMemoryReducer({ targetBytes: 1, logger })).toBeUndefined();
    expect(fake.state.calls).toEqual([]);
  });
});

describe('MEMORY_TARGET_MB', () => {
  const schema = Type.Object({ MEMORY_TARGET_MB: commonConfigProperties.MEMORY_TARGET_MB });

  test('When unset, then the target is 135 MB; 0 is accepted (off); a negative, fractional or non-numeric value stops the start naming the variable', () => {
    expect(loadConfig(schema, {}).MEMORY_TARGET_MB).toBe(DEFAULT_MEMORY_TARGET_MB);
    expect(DEFAULT_MEMORY_TARGET_MB).toBe(135);
    expect(loadConfig(schema, { MEMORY_TARGET_MB: '0' }).MEMORY_TARGET_MB).toBe(0);
    expect(loadConfig(schema, { MEMORY_TARGET_MB: '300' }).MEMORY_TARGET_MB).toBe(300);
    for (const bad of ['-1', '1.5', 'lots', '135MB']) {
      expect(() => loadConfig(schema, { MEMORY_TARGET_MB: bad })).toThrow(/MEMORY_TARGET_MB/);
    }
  });
});

describe('the reducer on its timer', () => {
  test('When started, then its timer reads RSS and collects without being called, and stops when told', async () => {
    const { logger } = captureLogger();
    const fake = fakeProcess(200);
    fake.state.freesMb = 0;
    const reducer = startMemoryReducer({ targetBytes: 135 * MB, logger, gc: fake.gc, rss: fake.rss, intervalMs: 5, minGapMs: 1, maxGapMs: 1 })!;
    await new Promise((resolve) => setTimeout(resolve, 100));
    reducer.stop();
    const ran = fake.state.calls.length;
    expect(ran).toBeGreaterThan(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fake.state.calls).toHaveLength(ran);
  });
});
