import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../../context.js';
import { answerNotModified, queryStringOf, weakEtag } from '../../platform/http/conditional.js';
import { badField, notFound } from '../../platform/http/errors.js';
import { KeptAnswers } from '../../platform/http/kept-answers.js';
import type { ServiceApp } from '../../platform/http/service-app.js';
import { CheckStatusesQuery, CheckStatusParams, CheckStatusSchema, MAX_STATUS_CHECK_IDS } from './schema.js';
import { readCheckStatuses, readCheckStatusesJson, readCheckStatusesVersion } from './store.js';

/**
 * The ids of a `checkId` query (comma-separated, blanks around ids ignored, repeats dropped).
 * @throws HttpError 400 naming `checkId` when the list is empty, an id is longer than 64
 *   characters, or there are more than MAX_STATUS_CHECK_IDS.
 */
export function parseCheckIds(value: string): string[] {
  const ids = [
    ...new Set(
      value
        .split(',')
        .map((id) => id.trim())
        .filter((id) => id !== ''),
    ),
  ];
  if (ids.length === 0)
    throw badField('checkId', 'must name at least one check id', 'minItems', 'querystring');
  if (ids.length > MAX_STATUS_CHECK_IDS) {
    throw badField(
      'checkId',
      `must name at most ${MAX_STATUS_CHECK_IDS} check ids`,
      'maxItems',
      'querystring',
    );
  }
  if (ids.some((id) => id.length > 64)) {
    throw badField('checkId', 'must hold ids of at most 64 characters', 'maxLength', 'querystring');
  }
  return ids;
}

/**
 * Bytes of `GET /v1/check-statuses` answers a service keeps (JSON and encodings, all accounts): the whole
 * list of 10,000 checks is 5.3 MB of JSON, 0.4 MB gzipped.
 */
export const KEPT_STATUSES_MAX_BYTES = 64 * 1024 * 1024;

/**
 * `GET /v1/check-statuses` and `GET /v1/check-statuses/{checkId}` (the compatible API's routes): the
 * status of each check from its latest FINAL result, with Outpost's 24-hour availability and hourly
 * response times, read from the rollups the result recorder keeps (recorder.ts), never from the
 * results themselves.
 */
export async function checkStatusRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const kept = new KeptAnswers(KEPT_STATUSES_MAX_BYTES);
  app.get(
    '/v1/check-statuses',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['checks'],
        summary: 'The status of every check of the account',
        description:
          'One entry per check, by name: the latest final result’s flags and response time, and (Outpost) 24-hour availability and hourly mean response times. Checks without a result have false flags and null figures. Outpost answers an `ETag` and, to a request whose `If-None-Match` names it, `304 Not Modified` without a body; with `limit` (and `page`), one page of the list.',
        querystring: CheckStatusesQuery,
        response: { 200: Type.Array(CheckStatusSchema) },
      },
    },
    async (request, reply) => {
      const { checkId, limit, page } = request.query;
      if (page !== undefined && limit === undefined) {
        throw badField('limit', 'is required with page', 'required', 'querystring');
      }
      const ids = checkId === undefined ? undefined : parseCheckIds(checkId);
      const inPage = limit === undefined ? undefined : { limit, offset: ((page ?? 1) - 1) * limit };
      const now = Date.now();
      // The ETag comes from a cheap read (readCheckStatusesVersion): a poll that names it again while nothing
      // changed is answered 304 without reading the statuses.
      const query = queryStringOf(request);
      const version = await readCheckStatusesVersion(ctx.db, request.accountId, now);
      const etag = weakEtag(['check-statuses', request.accountId, query, version]);
      if (answerNotModified(request, reply, etag)) return reply;
      // The answer is a function of what the ETag is made of, so the answer made for this ETag is sent again
      // while it holds (by this replica; another replica's change moves the ETag): reading and serializing
      // 10,000 statuses takes 70 ms after one new result (300–500 ms the first time), sending the kept bytes a few.
      return kept.send(request, reply, `${request.accountId}?${query}`, etag, async () => {
        // Serialized by JSON.stringify, entry by entry (readCheckStatusesJson keeps each entry's text until
        // what it is made of changes), not by the schema's compiled serializer: each entry has exactly
        // CheckStatusSchema's fields, in its order, so the bytes are the same, and at 10,000 checks (5 MB) the
        // compiled serializer took 40 ms where JSON.stringify takes 11 (its nullable numbers are `anyOf`s it
        // tells apart value by value).
        return Buffer.from(await readCheckStatusesJson(ctx.db, request.accountId, now, ids, inPage));
      });
    },
  );

  app.get(
    '/v1/check-statuses/:checkId',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['checks'],
        summary: 'The status of one check',
        params: CheckStatusParams,
        response: { 200: CheckStatusSchema },
      },
    },
    async (request) => {
      const { checkId } = request.params;
      const [status] = await readCheckStatuses(ctx.db, request.accountId, Date.now(), [checkId]);
      if (!status) throw notFound('check', checkId);
      return status;
    },
  );
}
