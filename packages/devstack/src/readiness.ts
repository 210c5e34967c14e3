import http from 'node:http';

export interface WaitOptions {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  readonly signal?: AbortSignal;
}

/** Polls `url` until it answers 200; rejects with the last answer or error when time is up. */
export async function waitForHttpOk(url: string, options: WaitOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    options.signal?.throwIfAborted();
    const status = await getStatus(url).catch((error: NodeJS.ErrnoException) => error.code ?? error.message);
    if (status === 200) return;
    const last = typeof status === 'number' ? `HTTP ${status}` : status;
    if (Date.now() >= deadline) {
      throw new Error(`${url} did not answer 200 within ${options.timeoutMs} ms (last: ${last})`);
    }
    await sleep(options.intervalMs ?? 250, options.signal);
  }
}

// node:http with no agent: no keep-alive socket outlives the check and holds
// the process (or a test runner) open.
function getStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: false, timeout: 2_000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.once('timeout', () => request.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    request.once('error', reject);
  });
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
