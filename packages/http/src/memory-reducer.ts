import type { Logger } from './logger';

/**
 * V8 keeps the heap pages a full collection frees, resident, in its page pool, and gives them back
 * only in a memory-reducing collection. Its memory reducer starts one only when allocation slows
 * down, which never happens under steady load: RSS then holds the heap's high-water mark (desk
 * ended `pnpm bench`'s flat cases at up to 164 MB, 10-13 MB of it V8's pages in no space;
 * bench/README.md, "Memory"). A regular full collection (`gc({ type: 'major' })`) frees the
 * objects but keeps the pages; the last-resort one reduces memory and empties the pool.
 *
 * So when RSS passes the target, this runs that collection, at most once per gap (15 s), and
 * doubles the gap (up to 10 min) while one does not bring RSS back under the target: memory that
 * is live or outside V8 is not the pool's, and collecting again would only cost pauses. Each
 * collection is a stop-the-world pause (87-197 ms, median 122, for desk's ~35 MB heap on a loaded
 * 2-CPU machine), measured against how often it runs: bench/README.md, "The page pool given back".
 */

/**
 * MEMORY_TARGET_MB's default: 15 MB under the 150 MB a service may hold under load (issue 25), as
 * V8's pages rise in steps of 5-12 MB between two readings of the reducer.
 */
export const DEFAULT_MEMORY_TARGET_MB = 135;

/**
 * V8's collector as `node --expose-gc` gives it: `gc({ type, flavor })` on Node 24, the images' (Node
 * 20's ran no full collection for these options when tried).
 */
export type CollectGarbage = (options: { type: 'major'; flavor: 'last-resort' }) => void;

export interface MemoryReducerOptions {
  /** RSS (bytes) above which a memory-reducing collection runs; 0 turns the reducer off. */
  targetBytes: number;
  logger: Logger;
  /** How often RSS is read; default 2 s. */
  intervalMs?: number;
  /** The least time between two collections; default 15 s. */
  minGapMs?: number;
  /** What the gap doubles up to while a collection leaves RSS over the target; default 10 min. */
  maxGapMs?: number;
  /** Default: the `gc` that `--expose-gc` put on globalThis. */
  gc?: CollectGarbage;
  rss?: () => number;
  now?: () => number;
}

export interface MemoryReducer {
  /** Reads RSS once and collects if it is over the target and the gap has passed (the timer calls this). */
  check(): boolean;
  stop(): void;
}

/** What every reducer of this process has done, for /metrics. */
export const memoryReductions = { count: 0, pauseSeconds: 0, freedBytes: 0 };

/**
 * The `gc` that `--expose-gc` puts on globalThis (V8 defines it so that it cannot be deleted: this
 * module is its one caller in the services).
 */
export function exposedGc(): CollectGarbage | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? (gc as CollectGarbage) : undefined;
}

const mb = (bytes: number) => Math.round(bytes / 104_857.6) / 10;

/**
 * Starts the reducer; undefined (nothing runs) when the target is 0 or node runs without
 * `--expose-gc` (`pnpm start`, the tests: the images' CMD gives it).
 */
export function startMemoryReducer(options: MemoryReducerOptions): MemoryReducer | undefined {
  if (!(options.targetBytes > 0)) return undefined;
  const gc = options.gc ?? exposedGc();
  if (!gc) return undefined;
  const rss = options.rss ?? (() => process.memoryUsage.rss());
  const now = options.now ?? (() => performance.now());
  const minGap = options.minGapMs ?? 15_000;
  const maxGap = options.maxGapMs ?? 600_000;
  let gap = minGap;
  let last = -Infinity;

  const check = () => {
    const before = rss();
    if (before <= options.targetBytes) {
      gap = minGap;
      return false;
    }
    const start = now();
    if (start - last < gap) return false;
    gc({ type: 'major', flavor: 'last-resort' });
    last = now();
    const after = rss();
    const pauseMs = last - start;
    gap = after > options.targetBytes ? Math.min(gap * 2, maxGap) : minGap;
    memoryReductions.count++;
    memoryReductions.pauseSeconds += pauseMs / 1000;
    memoryReductions.freedBytes += Math.max(0, before - after);
    options.logger.info('memory reduced', {
      rss_before_mb: mb(before),
      rss_after_mb: mb(after),
      target_mb: mb(options.targetBytes),
      pause_ms: Math.round(pauseMs * 10) / 10,
      next_in_s: gap / 1000,
    });
    return true;
  };

  const timer = setInterval(check, options.intervalMs ?? 2000);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}
