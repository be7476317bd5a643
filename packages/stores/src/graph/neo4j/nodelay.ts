// TCP_NODELAY on the Bolt sockets of open stores (see the top of neo4j-graph.ts for why).
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

/** Open stores per Bolt port: client sockets to these ports get TCP_NODELAY (see the top of neo4j-graph.ts). */
const noDelayPorts = new Map<number, number>();
const NET_CLIENT_SOCKET = 'net.client.socket';

const onClientSocket = (message: unknown): void => {
  const socket = (message as { socket?: Socket } | null)?.socket;
  socket?.once('connect', () => {
    if (socket.remotePort !== undefined && noDelayPorts.has(socket.remotePort)) socket.setNoDelay(true);
  });
};

export const noDelayOn = (port: number): void => {
  if (noDelayPorts.size === 0) diagnostics.subscribe(NET_CLIENT_SOCKET, onClientSocket);
  noDelayPorts.set(port, (noDelayPorts.get(port) ?? 0) + 1);
};

export const noDelayOff = (port: number): void => {
  const n = (noDelayPorts.get(port) ?? 1) - 1;
  if (n > 0) noDelayPorts.set(port, n);
  else noDelayPorts.delete(port);
  if (noDelayPorts.size === 0) diagnostics.unsubscribe(NET_CLIENT_SOCKET, onClientSocket);
};

/** Port of a bolt://, neo4j:// (+s, +ssc) URL; 7687 when it names none. */
export const boltPort = (url: string): number => {
  const m = /^[a-z0-9+]+:\/\/(?:[^@/]*@)?(?:\[[^\]]*\]|[^:/?#]*)(?::(\d+))?/i.exec(url);
  return m?.[1] ? Number(m[1]) : 7687;
};
