// What `pnpm start` shows while turbo builds: a first line saying it builds and how long a first
// start takes, a line per task turbo has to run (cache hits are only counted), a line now and then
// while a long task runs, and a last line with the counts. turbo's full output is kept and shown
// only when the build fails, where it holds the compiler's errors. Plain CommonJS: it runs before
// anything of the repository is built.
'use strict';

/** `@msp/hr:build: cache miss, executing 13b0…`: turbo's prefix (package:task) and the rest. */
const TASK_LINE = /^(@?[\w.-]+(?:\/[\w.-]+)?):([\w-]+): ?(.*)$/;
/** The first line of a task turbo runs: not in its cache (`miss`), or `--force` (`bypass`). */
const RUNS = /^cache (?:miss|bypass)\b/;
const HIT = /^cache hit\b/;

/** Elapsed time as m:ss. */
function clock(ms) {
  const total = Math.floor(ms / 1000);
  return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, '0')}`;
}

function describeTask(pkg, task) {
  if (task === 'build') return `building ${pkg}`;
  if (task === 'generate') return `generating ${pkg}'s database client`;
  return `${task} ${pkg}`;
}

/**
 * @param {{ write: (line: string) => void, echo?: (line: string) => void, now?: () => number, quietMs?: number }} options
 *   write: one message of the launcher; echo: one line of turbo's own output, as it was (default
 *   write); quietMs: after this long without a new line, say it is still building.
 */
function createBuildProgress(options) {
  const { write } = options;
  const echo = options.echo ?? write;
  const now = options.now ?? Date.now;
  const quietMs = options.quietMs ?? 20_000;
  const started = now();
  const output = [];
  let ran = 0;
  let cached = 0;
  let lastSaid = started;

  const say = (message) => {
    lastSaid = now();
    write(message);
  };

  say(
    'building… (the first start builds everything and takes about 2 minutes; later starts rebuild only what changed)',
  );
  const timer = setInterval(
    () => {
      if (now() - lastSaid >= quietMs) say(`still building… (${clock(now() - started)} so far)`);
    },
    Math.min(quietMs, 5_000),
  );
  timer.unref();

  return {
    /** One line of turbo's output (stdout or stderr). */
    line(text) {
      output.push(text);
      const match = TASK_LINE.exec(text);
      if (!match) return;
      const [, pkg, task, rest] = match;
      if (HIT.test(rest)) cached += 1;
      else if (RUNS.test(rest)) {
        ran += 1;
        say(`[${clock(now() - started)}] ${describeTask(pkg, task)}`);
      }
    },

    /** The build was stopped (Ctrl-C): said in one line, turbo's output is not the point. */
    interrupted(signal) {
      clearInterval(timer);
      write(`the build was stopped (${signal}) after ${clock(now() - started)}; nothing was started`);
    },

    /** turbo has exited with `code`; returns whether the build succeeded. */
    finish(code) {
      clearInterval(timer);
      const took = clock(now() - started);
      if (code !== 0) {
        for (const text of output) echo(text);
        write(`the build failed after ${took} (turbo's output is above): fix it and run pnpm start again`);
        return false;
      }
      write(
        ran === 0
          ? `build up to date (${cached} task(s) from turbo's cache)`
          : `built in ${took}: ${ran} task(s) run, ${cached} from turbo's cache`,
      );
      return true;
    },
  };
}

module.exports = { createBuildProgress };
