'use strict';
// The wiring: one network namespace per host, each with a veth "cable" into a bridge that lives in
// a namespace of its own (the switch). Nothing but the switch's cable to the root namespace
// (ROOT_LINK, ROOT_IP) touches the machine's own network, and every address sits inside the lab.

const fs = require('node:fs');
const { run, LabError } = require('./util');
const { NS_PREFIX, SWITCH_NS, BRIDGE, ROOT_LINK, ROOT_IP, HOSTS, SUBNET } = require('./topology');

const ip = (args, options) => run('ip', args, options);

async function listLabNamespaces() {
  const { stdout } = await ip(['netns', 'list']);
  return stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/)[0])
    .filter((name) => name && name.startsWith(NS_PREFIX));
}

async function rootLinkExists() {
  const { code } = await ip(['link', 'show', ROOT_LINK], { allowFail: true });
  return code === 0;
}

/** Fails when an address or route of the lab's /24 is already in use outside the lab. */
async function assertSubnetFree() {
  const { stdout: addrs } = await ip(['-o', '-4', 'addr', 'show']);
  const taken = addrs.split('\n').find((line) => line.includes(` ${SUBNET}.`) && !line.includes(ROOT_LINK));
  if (taken)
    throw new LabError(
      `the lab's subnet ${SUBNET}.0/24 is already used on this machine (set LAB_SUBNET to move the lab):`,
      taken.trim(),
    );
  const { stdout: routes } = await ip(['-4', 'route', 'show', `${SUBNET}.0/24`]);
  if (routes.trim() && !routes.includes(ROOT_LINK))
    throw new LabError(`a route for ${SUBNET}.0/24 exists already (set LAB_SUBNET to move the lab):`, routes.trim());
}

async function createNetwork() {
  await assertSubnetFree();
  await ip(['netns', 'add', SWITCH_NS]);
  await ip(['-n', SWITCH_NS, 'link', 'set', 'lo', 'up']);
  await ip(['-n', SWITCH_NS, 'link', 'add', BRIDGE, 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0']);
  await ip(['-n', SWITCH_NS, 'link', 'set', BRIDGE, 'up']);
  // The root namespace's cable: tests on the machine reach the balancer (and every host) here.
  await ip(['link', 'add', ROOT_LINK, 'type', 'veth', 'peer', 'name', 'root', 'netns', SWITCH_NS]);
  await ip(['-n', SWITCH_NS, 'link', 'set', 'root', 'master', BRIDGE, 'up']);
  await ip(['addr', 'add', `${ROOT_IP}/24`, 'dev', ROOT_LINK]);
  await ip(['link', 'set', ROOT_LINK, 'up']);
  await Promise.all(
    Object.values(HOSTS).map(async (host) => {
      await ip(['netns', 'add', host.ns]);
      await ip(['-n', host.ns, 'link', 'set', 'lo', 'up']);
      // eth0 in the host, the port named after the host in the switch: `ip -n msplab-sw link` reads like a patch panel.
      await ip([
        'link',
        'add',
        'eth0',
        'netns',
        host.ns,
        'type',
        'veth',
        'peer',
        'name',
        host.name,
        'netns',
        SWITCH_NS,
      ]);
      await ip(['-n', SWITCH_NS, 'link', 'set', host.name, 'master', BRIDGE, 'up']);
      await ip(['-n', host.ns, 'addr', 'add', `${host.ip}/24`, 'dev', 'eth0']);
      await ip(['-n', host.ns, 'link', 'set', 'eth0', 'up']);
    }),
  );
}

/** Process ids inside a namespace (ip netns pids reads every process's /proc/<pid>/ns/net). */
async function namespacePids(ns) {
  const { stdout, code } = await ip(['netns', 'pids', ns], { allowFail: true });
  if (code !== 0) return [];
  return stdout
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

async function deleteNamespace(ns) {
  await ip(['netns', 'del', ns], { allowFail: true });
  // `ip netns del` leaves the mount point when something still holds it; remove an empty one.
  try {
    fs.rmSync(`/run/netns/${ns}`, { force: true });
  } catch {
    // busy: reported by the caller's final check
  }
}

/** Unplugs (or plugs back) a host's cable at the switch: the host itself sees NO-CARRIER. */
async function setCable(hostName, up) {
  await ip(['-n', SWITCH_NS, 'link', 'set', hostName, up ? 'up' : 'down']);
}

async function cableUp(hostName) {
  const { stdout } = await ip(['-n', SWITCH_NS, '-o', 'link', 'show', hostName]);
  return !/state DOWN/.test(stdout) && /[<,]UP[,>]/.test(stdout);
}

const NFT_TABLE = 'msplab_partition';

/**
 * Drops every packet between a host and the given peers, inside the host's namespace (nftables),
 * leaving its other links alone: the host keeps talking to everyone else, e.g. the balancer.
 * `lbPorts` also drops what the host sends to those ports of the balancer (its database and Redis
 * connections), while the balancer still reaches the host.
 */
async function partition(host, peers, { lbPorts = [] } = {}) {
  const input = [];
  const output = [];
  if (peers.length) {
    const set = peers.map((peer) => peer.ip).join(', ');
    input.push(`ip saddr { ${set} } drop;`);
    output.push(`ip daddr { ${set} } drop;`);
  }
  if (lbPorts.length) output.push(`ip daddr ${HOSTS.lb.ip} tcp dport { ${lbPorts.join(', ')} } drop;`);
  const rules = `table inet ${NFT_TABLE} {
  chain input { type filter hook input priority -10; policy accept; ${input.join(' ')} }
  chain output { type filter hook output priority -10; policy accept; ${output.join(' ')} }
}
`;
  await unpartition(host);
  await run('ip', ['netns', 'exec', host.ns, 'nft', '-f', '-'], { input: rules });
}

async function unpartition(host) {
  await run('ip', ['netns', 'exec', host.ns, 'nft', 'delete', 'table', 'inet', NFT_TABLE], { allowFail: true });
}

/** What a partition cuts the host from: host names, and `lb:<ports>` for balancer ports. */
async function partitionedFrom(host) {
  const { stdout, code } = await run('ip', ['netns', 'exec', host.ns, 'nft', 'list', 'table', 'inet', NFT_TABLE], {
    allowFail: true,
  });
  if (code !== 0) return [];
  const cut = [];
  const peers = /ip saddr (\{[^}]*\}|[\d.]+)/.exec(stdout);
  if (peers) {
    const addresses = peers[1]
      .replace(/[{}]/g, '')
      .split(',')
      .map((a) => a.trim());
    cut.push(
      ...Object.values(HOSTS)
        .filter((peer) => addresses.includes(peer.ip))
        .map((peer) => peer.name),
    );
  }
  const ports = /tcp dport (\{[^}]*\}|\d+)/.exec(stdout);
  if (ports) cut.push(`lb:${ports[1].replace(/[{}\s]/g, '')}`);
  return cut;
}

module.exports = {
  listLabNamespaces,
  rootLinkExists,
  createNetwork,
  namespacePids,
  deleteNamespace,
  setCable,
  cableUp,
  partition,
  unpartition,
  partitionedFrom,
  ip,
};
