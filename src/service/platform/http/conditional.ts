import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** `String.prototype.isWellFormed` (ES2024, Node ≥ 20), past the ES2023 library this project compiles against. */
type WellFormedCheck = string & { isWellFormed(): boolean };

/**
 * A weak entity tag (RFC 9110 §8.8.3) of `parts` (any JSON values): `W/"` + 22 characters of the SHA-256 of
 * the parts, base64url + `"`. Weak, since a compressed answer's bytes differ from the plain one's.
 *
 * Each part is hashed framed by its kind and length, so two lists of parts never hash alike: a string as it is
 * (an answer's body, 14 MB for 10,000 checks, is not copied into a JSON string of its own with every quote
 * escaped), anything else, and a string that is not well-formed UTF-16 (whose lone surrogates UTF-8 would
 * blur), as its JSON.
 */
export function weakEtag(parts: readonly unknown[]): string {
  const hash = createHash('sha256');
  for (const part of parts) {
    const plain = typeof part === 'string' && (part as WellFormedCheck).isWellFormed();
    const text = plain ? part : (JSON.stringify(part) ?? 'undefined');
    hash.update(`${plain ? 's' : 'j'}${text.length}:`).update(text);
  }
  return `W/"${hash.digest('base64url').slice(0, 22)}"`;
}

/**
 * True when `ifNoneMatch` (the request's `If-None-Match`, absent or a list of tags separated by commas, or `*`)
 * names `etag` by the weak comparison GET and HEAD use (RFC 9110 §13.1.2): `W/` prefixes aside.
 */
export function ifNoneMatchHits(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}

/**
 * Gives `reply` the `ETag` `etag` and, when `request`'s `If-None-Match` names it, answers `304 Not Modified`
 * with no body. Returns true when it answered: the caller then reads and sends nothing more.
 */
export function answerNotModified(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  reply.header('etag', etag);
  if (!ifNoneMatchHits(request.headers['if-none-match'], etag)) return false;
  reply.code(304).send();
  return true;
}

/** The query string of `request` (after `?`, as sent; empty without one): ETags are per query string. */
export function queryStringOf(request: FastifyRequest): string {
  const at = request.url.indexOf('?');
  return at < 0 ? '' : request.url.slice(at + 1);
}
