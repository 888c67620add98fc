import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../../context.js';
import { answerNotModified, queryStringOf, weakEtag } from '../../platform/http/conditional.js';
import { badField, notFound } from '../../platform/http/errors.js';
import type { ServiceApp } from '../../platform/http/service-app.js';
import { CheckStatusesQuery, CheckStatusParams, CheckStatusSchema, MAX_STATUS_CHECK_IDS } from './schema.js';
import { readCheckStatuses, readCheckStatusesVersion } from './store.js';

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
 * `GET /v1/check-statuses` and `GET /v1/check-statuses/{checkId}` (the compatible API's routes): the
 * status of each check from its latest FINAL result, with Outpost's 24-hour availability and hourly
 * response times, read from the rollups the result recorder keeps (recorder.ts), never from the
 * results themselves.
 */
export async function checkStatusRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  app.get(
    '/v1/check-statuses',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['checks'],
        summary: 'The status of every check of the account',
        description:
          'One entry per check, by name: the latest final result’s flags and response time, and (Outpost) 24-hour availability and hourly mean response times. Checks without a result have false flags and null figures. Outpost answers an `ETag` and, to a request whose `If-None-Match` names it, `304 Not Modified` without a body.',
        querystring: CheckStatusesQuery,
        response: { 200: Type.Array(CheckStatusSchema) },
      },
    },
    async (request, reply) => {
      const { checkId } = request.query;
      const ids = checkId === undefined ? undefined : parseCheckIds(checkId);
      const now = Date.now();
      // The ETag comes from a cheap read (readCheckStatusesVersion): a poll that names it again while nothing
      // changed is answered 304 without reading the statuses.
      const version = await readCheckStatusesVersion(ctx.db, request.accountId, now);
      const etag = weakEtag(['check-statuses', request.accountId, queryStringOf(request), version]);
      if (answerNotModified(request, reply, etag)) return reply;
      const statuses = await readCheckStatuses(ctx.db, request.accountId, now, ids);
      // Serialized by JSON.stringify, not by the schema's compiled serializer: readCheckStatuses builds each
      // entry with exactly CheckStatusSchema's fields, in its order, so the bytes are the same, and at 10,000
      // checks (5 MB) the compiled serializer took 40 ms where JSON.stringify takes 11 (its nullable numbers
      // are `anyOf`s it tells apart value by value).
      return reply.serializer(JSON.stringify).send(statuses);
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
