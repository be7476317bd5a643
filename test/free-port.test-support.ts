import net from 'node:net';

/**
 * A TCP port free on 127.0.0.1 now: the kernel picks one (listen on port 0), the listener closes, the port is returned.
 * Suites that spawn a server on its own port use this instead of a random number in a fixed range, which two suites
 * running at once could both draw. Rejects with the listen error.
 */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
