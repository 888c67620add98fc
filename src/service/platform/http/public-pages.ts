import type { FastifyReply } from 'fastify';

/**
 * Answers a keyless public page's one 404 (a status page, a dashboard): `html`, a small page saying nothing is
 * there, with `Cache-Control: no-store`, no referrer, no sniffing and a content security policy that loads
 * nothing. A route answers an unknown page and a page the request may not see with it alike, so the two cannot
 * be told apart: call it before the route sets any header of its own (an ETag, a cookie).
 * @returns the reply, sent.
 */
export function answerPublicNotFound(reply: FastifyReply, html: string): FastifyReply {
  return reply
    .code(404)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', "default-src 'none'; base-uri 'none'; frame-ancestors 'none'")
    .type('text/html; charset=utf-8')
    .send(html);
}
