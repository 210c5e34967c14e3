/** Every slot stayed taken for the acquire timeout. */
export class ExportSlotsBusyError extends Error {
  constructor(
    readonly size: number,
    readonly acquireTimeoutMs: number,
  ) {
    super(`every export slot (${size}) stayed taken for ${acquireTimeoutMs} ms`);
    this.name = 'ExportSlotsBusyError';
  }
}

/**
 * At most `size` holders at once in this process, first come first served: the exports stream from
 * the API's pool, and must not take more of its connections than this. A caller that gets none
 * within `acquireTimeoutMs` is refused with ExportSlotsBusyError, or with what `onBusy` makes of it
 * (a service's 503 problem); one whose `signal` aborts stops waiting. `acquire` answers the
 * function that gives the slot back (once; later calls do nothing).
 */
export function exportSlots(
  size: number,
  acquireTimeoutMs: number,
  onBusy: (busy: ExportSlotsBusyError) => Error = (busy) => busy,
) {
  let free = size;
  const waiting: ((release: () => void) => void)[] = [];

  const releaser = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = waiting.shift();
      if (next) next(releaser());
      else free += 1;
    };
  };

  return {
    acquire(signal?: AbortSignal): Promise<() => void> {
      signal?.throwIfAborted();
      if (free > 0) {
        free -= 1;
        return Promise.resolve(releaser());
      }
      return new Promise((resolve, reject) => {
        const stopWaiting = (error: unknown) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          waiting.splice(waiting.indexOf(grant), 1);
          reject(error);
        };
        const grant = (release: () => void) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        };
        const onAbort = () => stopWaiting(signal!.reason);
        const timer = setTimeout(
          () => stopWaiting(onBusy(new ExportSlotsBusyError(size, acquireTimeoutMs))),
          acquireTimeoutMs,
        );
        signal?.addEventListener('abort', onAbort, { once: true });
        waiting.push(grant);
      });
    },
  };
}
