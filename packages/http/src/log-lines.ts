import TransportStream from 'winston-transport';

/** winston's `info[MESSAGE]`: the line a transport writes (triple-beam's symbol). */
export const MESSAGE = Symbol.for('message');

/** Transports with lines not yet written, flushed synchronously should the process exit first. */
const unwritten = new Set<BatchedLines>();
let exitHooked = false;

/**
 * Writes the lines logged during one turn of the event loop in one write. winston's Console
 * transport writes each line on its own, and stdout is synchronous for files and pipes on Linux:
 * a write(2) per request line is a large share of the CPU of a cheap read (docs/performance.md).
 * Lines are written in order, at the end of the turn (setImmediate), at once past 64 KiB, and,
 * should the process exit before that (process.exit after a fatal error), synchronously on exit:
 * no line is lost but to a SIGKILL within the turn.
 */
export class BatchedLines extends TransportStream {
  private pending = '';
  private scheduled = false;
  private readonly flushSoon = () => {
    this.scheduled = false;
    this.flush();
  };

  constructor(private readonly stream: NodeJS.WritableStream) {
    super();
    if (!exitHooked) {
      exitHooked = true;
      process.once('exit', () => {
        for (const transport of unwritten) transport.flush();
      });
    }
  }

  override log(info: object, callback: () => void): void {
    this.pending += `${(info as Record<symbol, string>)[MESSAGE]}\n`;
    if (this.pending.length > 65_536) {
      this.flush();
    } else {
      // Every time, not only when the turn's flush is scheduled: a flush past 64 KiB takes the
      // transport out, and what is logged after it in the same turn must still be written at exit.
      unwritten.add(this);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flushSoon);
      }
    }
    callback();
  }

  /** Writes what is pending, now. */
  flush(): void {
    unwritten.delete(this);
    if (!this.pending) return;
    const text = this.pending;
    this.pending = '';
    this.stream.write(text);
  }

  override close(): void {
    this.flush();
  }
}
