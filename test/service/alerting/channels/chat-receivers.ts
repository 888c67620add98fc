import type { IncomingHttpHeaders } from 'node:http';
import type { PeerAnswer, RecordedRequest } from '../../../helpers/alert-peers.js';

/**
 * Receivers that check each chat and push provider's documented request format and answer as the provider
 * does: its success status and body, and its error answer for a credential it does not know. Each returns the
 * problems it found (empty when the request is what the provider documents) and its answer.
 */

/** The credentials the receivers accept; anything else gets the provider's "unauthorized" answer. */
export const GOOD = {
  telegramToken: '110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw',
  discordToken: 'discord-webhook-token-planted-1',
  teamsSig: 'teams-sig-planted-2',
  mattermostKey: 'mattermost-hook-key-planted-3',
  googleToken: 'google-chat-token-planted-4',
  ntfyToken: 'tk_ntfyplantedaccesstoken000005',
  gotifyToken: 'AgotifyPlanted6',
  pushoverToken: 'azGDORePK8gMaC0QOYAMyEEuzJnyUi',
  pushoverUser: 'uQiRzpo4DXghDmr9QzzfQu27cmVRsG',
  matrixToken: 'syt_matrix_planted_access_token_7',
  appriseUrls: 'tgram://apprise-planted-bot-token-8/12345',
};

/** What a receiver found and answers. */
export type Verdict = { problems: string[]; answer: PeerAnswer };

const json = (status: number, body: unknown, headers: Record<string, string> = {}): PeerAnswer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

function contentType(h: IncomingHttpHeaders): string {
  return String(h['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

function parse(req: RecordedRequest, problems: string[]): Record<string, any> {
  if (contentType(req.headers) !== 'application/json')
    problems.push(`content-type ${req.headers['content-type']}`);
  try {
    const body = JSON.parse(req.body);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      problems.push('body is not an object');
    return body ?? {};
  } catch {
    problems.push('body is not JSON');
    return {};
  }
}

function need(ok: boolean, problem: string, problems: string[]): void {
  if (!ok) problems.push(problem);
}

/** Tags Telegram's `parse_mode: HTML` accepts (Bot API, "HTML style"). */
const TELEGRAM_TAGS = new Set([
  'b',
  'strong',
  'i',
  'em',
  'u',
  'ins',
  's',
  'strike',
  'del',
  'a',
  'code',
  'pre',
  'blockquote',
  'span',
  'tg-spoiler',
  'tg-emoji',
]);

/** Bot API `sendMessage`: `POST /bot{token}/sendMessage` with `chat_id`, `text` (1–4 096), `parse_mode`. */
export function telegram(req: RecordedRequest): Verdict {
  const problems: string[] = [];
  const m = /^\/bot([^/]+)\/sendMessage$/.exec(req.url);
  need(req.method === 'POST', `method ${req.method}`, problems);
  need(m !== null, `path ${req.url}`, problems);
  const body = parse(req, problems);
  need(body.chat_id !== undefined && body.chat_id !== '', 'no chat_id', problems);
  need(
    typeof body.text === 'string' && body.text.length > 0 && body.text.length <= 4096,
    'text not 1–4096',
    problems,
  );
  need(
    ['HTML', 'MarkdownV2', 'Markdown'].includes(body.parse_mode),
    `parse_mode ${body.parse_mode}`,
    problems,
  );
  for (const tag of String(body.text ?? '').matchAll(/<\/?([a-z-]+)/g)) {
    need(TELEGRAM_TAGS.has(tag[1]!), `tag <${tag[1]}> is not Telegram HTML`, problems);
  }
  if (m && decodeURIComponent(m[1]!) !== GOOD.telegramToken) {
    return { problems, answer: json(401, { ok: false, error_code: 401, description: 'Unauthorized' }) };
  }
  if (problems.length > 0) {
    return { problems, answer: json(400, { ok: false, error_code: 400, description: 'Bad Request' }) };
  }
  return {
    problems,
    answer: json(200, { ok: true, result: { message_id: 1, chat: { id: body.chat_id }, text: body.text } }),
  };
}

/** Discord execute webhook: `POST /api/webhooks/{id}/{token}`, `content` (≤ 2 000) and/or `embeds` (≤ 10). */
export function discord(req: RecordedRequest): Verdict {
  const problems: string[] = [];
  const m = /^\/api\/webhooks\/(\d+)\/([^/?]+)$/.exec(req.url);
  need(req.method === 'POST', `method ${req.method}`, problems);
  need(m !== null, `path ${req.url}`, problems);
  const body = parse(req, problems);
  const embeds = Array.isArray(body.embeds) ? body.embeds : [];
  need(typeof body.content === 'string' || embeds.length > 0, 'neither content nor embeds', problems);
  need(typeof body.content !== 'string' || body.content.length <= 2000, 'content over 2000', problems);
  need(embeds.length <= 10, 'over 10 embeds', problems);
  for (const e of embeds) {
    need(e.title === undefined || String(e.title).length <= 256, 'embed title over 256', problems);
    need(!Array.isArray(e.fields) || e.fields.length <= 25, 'over 25 fields', problems);
    for (const f of e.fields ?? []) {
      need(typeof f.name === 'string' && f.name.length > 0 && f.name.length <= 256, 'field name', problems);
      need(
        typeof f.value === 'string' && f.value.length > 0 && f.value.length <= 1024,
        'field value',
        problems,
      );
    }
    need(e.color === undefined || Number.isInteger(e.color), 'color not an integer', problems);
  }
  if (m && m[2] !== GOOD.discordToken) {
    return { problems, answer: json(401, { message: 'Invalid Webhook Token', code: 50027 }) };
  }
  if (problems.length > 0)
    return { problems, answer: json(400, { message: 'Cannot send an empty message', code: 50006 }) };
  return { problems, answer: { status: 204, body: '' } };
}

/** Teams workflow webhook: a `message` with one Adaptive Card attachment; the workflow answers 202. */
export function teams(req: RecordedRequest): Verdict {
  const problems: string[] = [];
  const url = new URL(req.url, 'http://x');
  need(req.method === 'POST', `method ${req.method}`, problems);
  need(url.pathname.startsWith('/workflows/'), `path ${url.pathname}`, problems);
  const body = parse(req, problems);
  need(body.type === 'message', `type ${body.type}`, problems);
  const attachment = Array.isArray(body.attachments) ? body.attachments[0] : undefined;
  need(
    attachment?.contentType === 'application/vnd.microsoft.card.adaptive',
    'attachment contentType',
    problems,
  );
  const card = attachment?.content ?? {};
  need(card.type === 'AdaptiveCard', `card type ${card.type}`, problems);
  need(/^1\.\d$/.test(String(card.version)), `card version ${card.version}`, problems);
  need(Array.isArray(card.body) && card.body.length > 0, 'card body empty', problems);
  for (const element of card.body ?? []) {
    need(
      ['TextBlock', 'FactSet', 'Container', 'ColumnSet'].includes(element.type),
      `element ${element.type}`,
      problems,
    );
  }
  for (const action of card.actions ?? []) {
    need(action.type === 'Action.OpenUrl' && /^https?:\/\//.test(action.url), 'action', problems);
  }
  if (url.searchParams.get('sig') !== GOOD.teamsSig) {
    return {
      problems,
      answer: json(401, {
        error: { code: 'DirectApiAuthorizationRequired', message: 'The request must be authenticated' },
      }),
    };
  }
  if (problems.length > 0)
    return { problems, answer: json(400, { error: { code: 'InvalidRequestContent' } }) };
  return { problems, answer: { status: 202, body: '' } };
}

/** Mattermost incoming webhook: `POST /hooks/{key}` with `text`; answers 200 `ok`. */
export function mattermost(req: RecordedRequest): Verdict {
  const problems: string[] = [];
  const m = /^\/hooks\/([^/?]+)$/.exec(req.url);
  need(req.method === 'POST', `method ${req.method}`, problems);
  need(m !== null, `path ${req.url}`, problems);
  const body = parse(req, problems);
  need(typeof body.text === 'string' && body.text.length > 0 && body.text.length <= 16383, 'text', problems);
  if (m && m[1] !== GOOD.mattermostKey) {
    return {
      problems,
      answer: json(400, {
        id: 'web.incoming_webhook.invalid.app_error',
        message: 'Invalid webhook.',
        status_code: 400,
      }),
    };
  }
  if (problems.length > 0)
    return { problems, answer: json(400, { message: 'Unable to parse incoming data.' }) };
  return { problems, answer: { status: 200, headers: { 'content-type': 'text/plain' }, body: 'ok' } };
}

/** Google Chat incoming webhook: `POST /v1/spaces/{space}/messages?key=…&token=…` with `text` and/or `cardsV2`. */
export function googleChat(req: RecordedRequest): Verdict {
  const problems: string[] = [];
  const url = new URL(req.url, 'http://x');
  need(req.method === 'POST', `method ${req.method}`, problems);
  need(/^\/v1\/spaces\/[^/]+\/messages$/.test(url.pathname), `path ${url.pathname}`, problems);
  need(url.searchParams.has('key'), 'no key', problems);
  const body = parse(req, problems);
  need(typeof body.text === 'string' || Array.isArray(body.cardsV2), 'neither text nor cardsV2', problems);
  for (const c of body.cardsV2 ?? []) {
    need(typeof c.cardId === 'string' && c.cardId.length > 0, 'cardId', problems);
    need(typeof c.card === 'object' && Array.isArray(c.card.sections), 'card sections', problems);
    for (const s of c.card?.sections ?? []) {
      for (const w of s.widgets ?? []) {
        const kinds = Object.keys(w).filter((k) =>
          ['decoratedText', 'textParagraph', 'buttonList'].includes(k),
        );
        need(kinds.length === 1, `widget ${Object.keys(w).join(',')}`, problems);
      }
    }
  }
  if (url.searchParams.get('token') !== GOOD.googleToken) {
    return {
      problems,
      answer: json(401, {
        error: {
          code: 401,
          message: 'Request had invalid authentication credentials.',
          status: 'UNAUTHENTICATED',
        },
      }),
    };
  }
  if (problems.length > 0)
    return { problems, answer: json(400, { error: { code: 400, status: 'INVALID_ARGUMENT' } }) };
  return { problems, answer: json(200, { name: 'spaces/AAA/messages/1', text: body.text }) };
}

/** ntfy JSON publish: `POST /` with `topic`, `message`, `title`, `priority` 1–5, `tags`; Bearer token. */
export function ntfy(req: RecordedRequest): Verdict {
  const problems: string[] = [];
  need(req.method === 'POST' && req.url === '/', `${req.method} ${req.url}`, problems);
  const body = parse(req, problems);
  need(typeof body.topic === 'string' && /^[-_A-Za-z0-9]{1,64}$/.test(body.topic), 'topic', problems);
  need(typeof body.message === 'string' && body.message.length > 0, 'message', problems);
  need(body.title === undefined || typeof body.title === 'string', 'title', problems);
  need(
    body.priority === undefined || [1, 2, 3, 4, 5].includes(body.priority),
    `priority ${body.priority}`,
    problems,
  );
  need(
    body.tags === undefined ||
      (Array.isArray(body.tags) && body.tags.every((t: unknown) => typeof t === 'string')),
    'tags',
    problems,
  );
  need(body.click === undefined || /^https?:\/\//.test(body.click), 'click', problems);
  if (req.headers.authorization !== `Bearer ${GOOD.ntfyToken}`) {
    return {
      problems,
      answer: json(403, {
        code: 40301,
        http: 403,
        error: 'forbidden',
        link: 'https://ntfy.sh/docs/publish/#authentication',
      }),
    };
  }
  if (problems.length > 0)
    return { problems, answer: json(400, { code: 40001, http: 400, error: 'invalid request' }) };
  return {
    problems,
    answer: json(200, {
      id: 'sPs71M8A2T',
      time: 1700000000,
      event: 'message',
      topic: body.topic,
      message: body.message,
    }),
  };
}

/** Gotify: `POST /message` with `X-Gotify-Key` (or `?token=`), `message` required, `title`, `priority`. */
export function gotify(req: RecordedRequest): Verdict {
  const problems: string[] = [];
  const url = new URL(req.url, 'http://x');
  need(req.method === 'POST' && url.pathname === '/message', `${req.method} ${url.pathname}`, problems);
  const body = parse(req, problems);
  need(typeof body.message === 'string' && body.message.length > 0, 'message', problems);
  need(body.priority === undefined || Number.isInteger(body.priority), 'priority', problems);
  need(body.extras === undefined || typeof body.extras === 'object', 'extras', problems);
  const token = req.headers['x-gotify-key'] ?? url.searchParams.get('token');
  if (token !== GOOD.gotifyToken) {
    return {
      problems,
      answer: json(401, {
        error: 'Unauthorized',
        errorCode: 401,
        errorDescription: 'you need to provide a valid access token or user credentials to access this api',
      }),
    };
  }
  if (problems.length > 0) return { problems, answer: json(400, { error: 'Bad Request', errorCode: 400 }) };
  return {
    problems,
    answer: json(200, {
      id: 25,
      appid: 5,
      message: body.message,
      title: body.title,
      priority: body.priority,
    }),
  };
}

/** Pushover: `POST /1/messages.json`, form-encoded `token`, `user` (30 characters each), `message` ≤ 1 024. */
export function pushover(req: RecordedRequest): Verdict {
  const problems: string[] = [];
  need(req.method === 'POST' && req.url === '/1/messages.json', `${req.method} ${req.url}`, problems);
  need(
    contentType(req.headers) === 'application/x-www-form-urlencoded',
    `content-type ${req.headers['content-type']}`,
    problems,
  );
  const form = new URLSearchParams(req.body);
  const message = form.get('message') ?? '';
  need(message.length > 0 && message.length <= 1024, 'message not 1–1024', problems);
  need((form.get('title') ?? '').length <= 250, 'title over 250', problems);
  need(!form.has('url') || (form.get('url') ?? '').length <= 512, 'url over 512', problems);
  need(!form.has('priority') || ['-2', '-1', '0', '1'].includes(form.get('priority')!), 'priority', problems);
  need(!form.has('timestamp') || /^\d+$/.test(form.get('timestamp')!), 'timestamp', problems);
  if (form.get('token') !== GOOD.pushoverToken) {
    return {
      problems,
      answer: json(400, {
        token: 'invalid',
        errors: ['application token is invalid'],
        status: 0,
        request: 'r-1',
      }),
    };
  }
  if (form.get('user') !== GOOD.pushoverUser) {
    return {
      problems,
      answer: json(400, {
        user: 'invalid',
        errors: ['user identifier is not a valid user, group, or subscribed user key'],
        status: 0,
        request: 'r-2',
      }),
    };
  }
  if (problems.length > 0) return { problems, answer: json(400, { errors: problems, status: 0 }) };
  return { problems, answer: json(200, { status: 1, request: '647d2300-702c-4b38-8b2f-d56326ae460b' }) };
}

/** Matrix: `PUT /_matrix/client/v3/rooms/{roomId}/send/m.room.message/{txnId}`, Bearer token, `msgtype` `body`. */
export function matrix(req: RecordedRequest): Verdict {
  const problems: string[] = [];
  const m = /^\/_matrix\/client\/v3\/rooms\/([^/]+)\/send\/m\.room\.message\/([^/]+)$/.exec(req.url);
  need(req.method === 'PUT', `method ${req.method}`, problems);
  need(m !== null, `path ${req.url}`, problems);
  if (m) need(decodeURIComponent(m[1]!).startsWith('!'), 'room id', problems);
  const body = parse(req, problems);
  need(body.msgtype === 'm.text', `msgtype ${body.msgtype}`, problems);
  need(typeof body.body === 'string' && body.body.length > 0, 'body', problems);
  if (body.format !== undefined) {
    need(body.format === 'org.matrix.custom.html', 'format', problems);
    need(typeof body.formatted_body === 'string', 'formatted_body', problems);
  }
  if (req.headers.authorization !== `Bearer ${GOOD.matrixToken}`) {
    return {
      problems,
      answer: json(401, {
        errcode: 'M_UNKNOWN_TOKEN',
        error: 'Invalid access token passed.',
        soft_logout: false,
      }),
    };
  }
  if (problems.length > 0)
    return { problems, answer: json(400, { errcode: 'M_BAD_JSON', error: 'Bad JSON' }) };
  return { problems, answer: json(200, { event_id: `$${m?.[2] ?? 'x'}` }) };
}

/** Apprise API: `POST /notify/{key}` or `POST /notify` (with `urls`); `body` required, `type` one of four. */
export function apprise(req: RecordedRequest): Verdict {
  const problems: string[] = [];
  const m = /^\/notify(?:\/([A-Za-z0-9_-]+))?$/.exec(req.url);
  need(req.method === 'POST', `method ${req.method}`, problems);
  need(m !== null, `path ${req.url}`, problems);
  const body = parse(req, problems);
  need(typeof body.body === 'string' && body.body.length > 0, 'body', problems);
  need(['info', 'success', 'warning', 'failure'].includes(body.type), `type ${body.type}`, problems);
  need(body.format === undefined || ['text', 'markdown', 'html'].includes(body.format), 'format', problems);
  const stateless = m !== null && m[1] === undefined;
  if (stateless) need(typeof body.urls === 'string' && body.urls.length > 0, 'no urls', problems);
  const known = stateless ? body.urls === GOOD.appriseUrls : m?.[1] === 'outpost';
  if (problems.length > 0) return { problems, answer: { status: 400, body: 'Bad FORM Payload provided' } };
  // Apprise answers 424 when a service of the notification refused it (a bad token in an Apprise URL).
  if (!known)
    return { problems, answer: { status: 424, body: 'One or more notification could not be sent.' } };
  return { problems, answer: { status: 200, body: 'Notification(s) sent.' } };
}
