/**
 * What must not outlive the test process (server processes, network namespaces) registers a
 * synchronous undo here. `stop()` of a peer does the orderly version and unregisters; this is the
 * net for a suite that forgot `stop()`, threw in `beforeAll`, or a worker told to exit. A process
 * killed outright runs nothing: its children die with it (they are started with a parent-death
 * signal) and its namespaces are swept by the next run (see netns.ts).
 */
const tasks = new Map<number, () => void>();
let nextId = 0;
let installed = false;

function runAll(): void {
  for (const task of [...tasks.values()].reverse()) {
    try {
      task();
    } catch {
      // best effort: the remaining tasks still run
    }
  }
  tasks.clear();
}

function install(): void {
  if (installed) return;
  installed = true;
  process.once('exit', runAll);
  // Only where nobody else handles the signal: then Node's default would end the process without
  // 'exit' handlers, so clean up and let the signal take its default course afterwards.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    if (process.listenerCount(signal) > 0) continue;
    process.once(signal, () => {
      runAll();
      process.kill(process.pid, signal);
    });
  }
}

/** Registers `task` to run at process exit; the returned function unregisters it. */
export function atExit(task: () => void): () => void {
  install();
  const id = nextId++;
  tasks.set(id, task);
  return () => {
    tasks.delete(id);
  };
}
