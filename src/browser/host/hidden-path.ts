/** The browser host's server answers nothing but the WebSocket upgrade at its unguessable path. */
import http from 'node:http';

/**
 * Runs `launch` (which starts the server) and makes every HTTP server it creates answer plain
 * requests with 404. Playwright's server answers `GET /json` with its unguessable WebSocket
 * path, which would let any local process (a sandboxed script included) find and drive the
 * browser; only the WebSocket upgrade at that path is served.
 *
 * @returns what `launch` resolved to.
 * @throws Error when no server was created (a Playwright that builds it otherwise): the host
 *   must not serve then.
 */
export async function withHiddenPath<T>(launch: () => Promise<T>): Promise<T> {
  const servers: http.Server[] = [];
  const createServer = http.createServer;
  (http as { createServer: unknown }).createServer = (...args: Parameters<typeof http.createServer>) => {
    const server = createServer(...args);
    servers.push(server);
    return server;
  };
  let result: T;
  try {
    result = await launch();
  } finally {
    http.createServer = createServer;
  }
  if (servers.length === 0)
    throw new Error('Playwright created no HTTP server whose requests can be refused');
  for (const server of servers) {
    server.removeAllListeners('request');
    server.on('request', (_request: http.IncomingMessage, response: http.ServerResponse) => {
      response.statusCode = 404;
      response.end();
    });
  }
  return result;
}
