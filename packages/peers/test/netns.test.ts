import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canConnect } from '../src/internal/process';
import { startTimeOf } from '../src/internal/owner';
import { peersRoot } from '../src/internal/paths';
import { createNetworkNamespace, listPeerNamespaces, sweepStaleNamespaces } from '../src/netns';

function namespaces(): string[] {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '');
}

describe('network namespaces', () => {
  it('When two namespaces are made at once, then they get different /30s and the root namespace reaches a server in each', async () => {
    const [a, b] = await Promise.all([createNetworkNamespace(), createNetworkNamespace()]);
    try {
      expect(a.name).not.toBe(b.name);
      expect(a.address).not.toBe(b.address);
      expect(a.address).toMatch(/^10\.231\.\d+\.\d+$/);
      const server = spawn(
        'ip',
        [
          'netns',
          'exec',
          a.name,
          process.execPath,
          '-e',
          "require('net').createServer((s) => s.end()).listen(7000, '0.0.0.0')",
        ],
        { stdio: 'ignore' },
      );
      try {
        let reached = false;
        for (let i = 0; i < 100 && !reached; i++) {
          reached = await canConnect(a.address, 7000, 200);
          if (!reached) await new Promise((r) => setTimeout(r, 50));
        }
        expect(reached).toBe(true);
        // the other namespace has no such server: its port 7000 is its own
        expect(await canConnect(b.address, 7000, 500)).toBe(false);
      } finally {
        server.kill('SIGKILL');
      }
    } finally {
      await a.destroy();
      await b.destroy();
    }
    expect(namespaces()).not.toContain(a.name);
    expect(namespaces()).not.toContain(b.name);
  });

  it('When a run died leaving a namespace behind, then the next sweep deletes it, with or without its slot marker', async () => {
    const dead = spawnSync('true');
    const deadOwner = { pid: dead.pid!, startTime: startTimeOf(process.pid) };
    const slot = 16000 + Math.floor(Math.random() * 300);
    const withMarker = `msp-peers-${slot}`;
    const withoutMarker = `msp-peers-${slot + 1}`;
    execFileSync('ip', ['netns', 'add', withMarker]);
    execFileSync('ip', ['netns', 'add', withoutMarker]);
    writeFileSync(join(peersRoot(), 'netns', `slot-${slot}`), JSON.stringify(deadOwner));

    sweepStaleNamespaces();

    expect(listPeerNamespaces()).not.toContain(withMarker);
    expect(listPeerNamespaces()).not.toContain(withoutMarker);
  });
});
