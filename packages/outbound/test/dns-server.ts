import dgram from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import type { AddressInfo } from 'node:net';

/**
 * A DNS server on 127.0.0.1 that the test controls: each A query is answered with the next address
 * of `answers` (the last one repeats), TTL 0. Enough of RFC 1035 for Node's resolver (c-ares).
 */
export async function startDnsServer(answers: string[]) {
  const socket = dgram.createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (query, peer) => {
    // Header (12 bytes), then the question: labels up to a zero byte, QTYPE, QCLASS.
    let end = 12;
    const labels: string[] = [];
    while (query[end]! > 0) {
      labels.push(query.subarray(end + 1, end + 1 + query[end]!).toString('ascii'));
      end += query[end]! + 1;
    }
    const question = query.subarray(12, end + 5);
    const qtype = query.readUInt16BE(end + 1);
    queries.push(labels.join('.'));
    const address = answers[Math.min(queries.length - 1, answers.length - 1)]!;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the id
    header.writeUInt16BE(0x8180, 2); // a response, recursion desired and available, no error
    header.writeUInt16BE(1, 4); // one question
    header.writeUInt16BE(qtype === 1 ? 1 : 0, 6); // one answer to an A query, none to others
    const answer = Buffer.alloc(16);
    answer.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    answer.writeUInt16BE(1, 2); // A
    answer.writeUInt16BE(1, 4); // IN
    answer.writeUInt32BE(0, 6); // TTL 0: nothing is cached
    answer.writeUInt16BE(4, 10);
    address.split('.').forEach((octet, i) => answer.writeUInt8(Number(octet), 12 + i));
    socket.send(Buffer.concat(qtype === 1 ? [header, question, answer] : [header, question]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const server = `127.0.0.1:${(socket.address() as AddressInfo).port}`;
  return {
    queries,
    /** A lookup (as OutboundOptions takes it) that asks this server, through Node's own resolver. */
    lookup: async (hostname: string) => {
      const resolver = new Resolver({ timeout: 1000, tries: 1 });
      resolver.setServers([server]);
      return resolver.resolve4(hostname);
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
