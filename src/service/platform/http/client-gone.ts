import type { FastifyReply } from 'fastify';

/**
 * Aborts `wait` when the client of a long poll goes away before the answer (it stopped, or its HTTP client gave
 * up). Listens on the response, not the request: a request's `close` fires as soon as its body has been read,
 * so it says nothing about the connection. A connection already gone aborts at once.
 */
export function abortWhenClientGone(reply: FastifyReply, wait: { abort(): void }): void {
  const response = reply.raw;
  if (response.destroyed || response.socket?.destroyed) {
    wait.abort();
    return;
  }
  response.once('close', () => {
    if (!response.writableFinished) wait.abort();
  });
}
