import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { atExit } from './internal/cleanup';
import { isStaleMarker, tryCreateMarker } from './internal/lock';
import { peersRoot } from './internal/paths';
import { run } from './internal/process';

/**
 * Network namespaces for servers that need their own well-known ports (a domain controller's 53,
 * 88, 389, 636). Each gets a /30 out of 10.231.0.0/16: the root namespace's end of a veth pair
 * holds .1 of it and the namespace's end .2, so Node in the root namespace reaches the server at
 * `address` without any routing or NAT, and nothing else on the machine sees the range.
 *
 * Slots are claimed with O_EXCL marker files that name the owning process, so parallel Jest
 * workers and parallel packages never collide; a marker whose owner died (a crashed or killed
 * run) is reclaimed by the next allocation, which first removes the namespace that owner left.
 */
export const NETNS_SUBNET = '10.231.0.0/16';
const PREFIX = 'msp-peers-';
const SLOTS = 16384; // /30s in a /16

export interface NetworkNamespace {
  /** The namespace's name, for `ip netns exec`. */
  name: string;
  /** The server's address inside the namespace, reachable from the root namespace. */
  address: string;
  /** The root namespace's end of the link. */
  hostAddress: string;
  /** Kills whatever still runs inside, deletes the namespace and frees the slot. */
  destroy(): Promise<void>;
}

function slotsDir(): string {
  const dir = join(peersRoot(), 'netns');
  mkdirSync(dir, { recursive: true });
  return dir;
}

function names(slot: number) {
  const third = slot >> 6;
  const fourth = (slot & 63) << 2;
  return {
    netns: `${PREFIX}${slot}`,
    hostIf: `mspp${slot}h`,
    nsIf: `mspp${slot}n`,
    hostAddress: `10.231.${third}.${fourth + 1}`,
    address: `10.231.${third}.${fourth + 2}`,
  };
}

function existingNamespaces(): string[] {
  try {
    const out = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out
      .split('\n')
      .map((line) => line.split(' ')[0] ?? '')
      .filter((n) => n.startsWith(PREFIX));
  } catch {
    return [];
  }
}

/** Synchronous, for exit hooks: kill every process in the namespace, then delete it. */
function removeNamespaceSync(netns: string, hostIf: string): void {
  try {
    const pids = execFileSync('ip', ['netns', 'pids', netns], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    for (const pid of pids.split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone already
      }
    }
  } catch {
    // no such namespace
  }
  for (const args of [
    ['netns', 'delete', netns],
    ['link', 'delete', hostIf],
  ]) {
    try {
      execFileSync('ip', args, { stdio: 'ignore' });
    } catch {
      // already gone (deleting the namespace removes the veth pair)
    }
  }
}

/**
 * Removes namespaces of ours that no live process owns: those whose slot marker names a dead
 * process, and those with no marker at all (a marker is always written before its namespace is
 * made, and removed after it is deleted).
 */
export function sweepStaleNamespaces(): void {
  const dir = slotsDir();
  const markers = new Set(readdirSync(dir).filter((f) => /^slot-\d+$/.test(f)));
  for (const marker of markers) {
    const slot = Number(marker.slice('slot-'.length));
    const path = join(dir, marker);
    if (!isStaleMarker(path)) continue;
    // Claim the dead marker (only one sweeper wins), clean up, free the slot.
    if (tryCreateMarker(path, () => cleanupSlot(slot))) {
      rmSync(path, { force: true });
    }
  }
  for (const netns of existingNamespaces()) {
    const slot = Number(netns.slice(PREFIX.length));
    if (!Number.isInteger(slot) || markers.has(`slot-${slot}`)) continue;
    // Re-check: a slot may have been claimed since the listing.
    if (tryCreateMarker(join(dir, `slot-${slot}`), () => undefined)) {
      cleanupSlot(slot);
      rmSync(join(dir, `slot-${slot}`), { force: true });
    }
  }
}

function cleanupSlot(slot: number): void {
  const n = names(slot);
  removeNamespaceSync(n.netns, n.hostIf);
}

/** Creates a namespace with a veth link to the root namespace, in a slot no one else holds. */
export async function createNetworkNamespace(): Promise<NetworkNamespace> {
  sweepStaleNamespaces();
  const dir = slotsDir();
  const start = Math.floor(Math.random() * 64);
  let slot = -1;
  for (let i = 0; i < SLOTS; i++) {
    const candidate = (start + i) % SLOTS;
    if (tryCreateMarker(join(dir, `slot-${candidate}`))) {
      slot = candidate;
      break;
    }
  }
  if (slot < 0) throw new Error(`No free network slot in ${NETNS_SUBNET}`);
  const n = names(slot);
  const marker = join(dir, `slot-${slot}`);
  let unregister: (() => void) | undefined;
  try {
    // A namespace of that name left by something that did not keep a marker: remove it first.
    removeNamespaceSync(n.netns, n.hostIf);
    unregister = atExit(() => {
      removeNamespaceSync(n.netns, n.hostIf);
      rmSync(marker, { force: true });
    });
    await run('ip', ['netns', 'add', n.netns]);
    await run('ip', ['link', 'add', n.hostIf, 'type', 'veth', 'peer', 'name', n.nsIf]);
    await run('ip', ['link', 'set', n.nsIf, 'netns', n.netns]);
    await run('ip', ['addr', 'add', `${n.hostAddress}/30`, 'dev', n.hostIf]);
    await run('ip', ['link', 'set', n.hostIf, 'up']);
    await run('ip', ['-n', n.netns, 'addr', 'add', `${n.address}/30`, 'dev', n.nsIf]);
    await run('ip', ['-n', n.netns, 'link', 'set', n.nsIf, 'up']);
    await run('ip', ['-n', n.netns, 'link', 'set', 'lo', 'up']);
  } catch (error) {
    removeNamespaceSync(n.netns, n.hostIf);
    rmSync(marker, { force: true });
    unregister?.();
    throw error;
  }

  let destroyed = false;
  return {
    name: n.netns,
    address: n.address,
    hostAddress: n.hostAddress,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      removeNamespaceSync(n.netns, n.hostIf);
      rmSync(marker, { force: true });
      unregister?.();
    },
  };
}

/** The namespaces of this package that exist now (for tests that check nothing was left). */
export function listPeerNamespaces(): string[] {
  return existingNamespaces();
}
