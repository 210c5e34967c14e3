import { readFileSync } from 'node:fs';

/**
 * A process named so that a recycled pid is not mistaken for it: the pid and the kernel's start
 * time of that pid (field 22 of /proc/<pid>/stat). Marker files (locks, subnet slots, instance
 * directories) record one; whoever finds the marker later checks whether that exact process lives.
 */
export interface Owner {
  pid: number;
  startTime: string;
}

export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is parenthesised and may hold spaces or parentheses itself.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}

let self: Owner | undefined;
export function currentOwner(): Owner {
  self ??= { pid: process.pid, startTime: startTimeOf(process.pid) ?? '0' };
  return self;
}

export function isAlive(owner: Owner): boolean {
  return startTimeOf(owner.pid) === owner.startTime;
}

export function parseOwner(text: string): Owner | undefined {
  try {
    const value = JSON.parse(text) as Partial<Owner>;
    if (typeof value.pid === 'number' && typeof value.startTime === 'string')
      return { pid: value.pid, startTime: value.startTime };
  } catch {
    // a marker being written right now, or garbage: treated as unknown
  }
  return undefined;
}
