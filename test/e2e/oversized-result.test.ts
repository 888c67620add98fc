import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { SQLite } from '../../src/service/platform/store/sqlite.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RESULT_SIZE_BYTES } from '../../src/protocol/index.js';
import {
  awaitSession,
  type CliProcess,
  freePort,
  type ServiceProcess,
  spawnCli,
  startServiceProcess,
  stopCli,
} from '../helpers/cli.js';

/** 1 MiB of U+0001: each character is 6 bytes of JSON (`\u0001`), so one body alone is 6 MiB. */
const CONTROL_TEXT = '\u0001'.repeat(1024 * 1024);

describe('a result over the service limit is trimmed by the agent and stored (issue 9 item 2.4)', () => {
  let server: Server;
  let service: ServiceProcess;
  let agent: CliProcess;
  const apiKey = `op_e2e_${'r'.repeat(40)}`;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(CONTROL_TEXT);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    service = await startServiceProcess(apiKey);
    agent = spawnCli(['agent'], {
      API_KEY: apiKey,
      SERVICE_URL: service.url,
      AGENT_HEALTH_PORT: String(await freePort()),
      NETWORK_TRACES: 'off',
    });
  });

  afterAll(async () => {
    await stopCli(agent);
    await service?.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('an API check whose body and script output make > 8 MiB of JSON: stored, cut, with the reason', async () => {
    const port = (server.address() as { port: number }).port;
    const created = await service.api('POST', '/v1/checks/api', {
      name: 'huge answer',
      activated: false,
      request: {
        url: `http://127.0.0.1:${port}/`,
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
      },
      // Script output becomes the result's logs: 6 MiB more of JSON.
      localSetupScript: "console.log('\\u0001'.repeat(900 * 1024));",
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const triggered = await service.api('POST', '/v1/check-sessions/trigger', {
      target: { checkId: [created.json.id] },
    });
    expect(triggered.status).toBe(201);
    const session = await awaitSession(service.api, triggered.json.sessions[0].checkSessionId, 60_000);
    expect(session.status, JSON.stringify(session)).not.toBe('TIMED_OUT');

    const db = new SQLite(join(service.dataDir, 'outpost.db'), { readonly: true, fileMustExist: true });
    const rows = db
      .prepare('SELECT doc, status FROM check_results WHERE check_id = ?')
      .all(created.json.id) as {
      doc: string;
      status: string;
    }[];
    db.close();
    expect(rows).toHaveLength(1);
    const doc = JSON.parse(rows[0]!.doc);
    expect(doc.status).toBe('PASSED');
    expect(doc.truncated).toMatchObject({
      reason: expect.stringContaining(`limit of ${MAX_RESULT_SIZE_BYTES} bytes`),
      originalSizeBytes: expect.any(Number),
    });
    expect(doc.truncated.originalSizeBytes).toBeGreaterThan(MAX_RESULT_SIZE_BYTES);
    expect(Buffer.byteLength(rows[0]!.doc)).toBeLessThanOrEqual(MAX_RESULT_SIZE_BYTES);
    // Logs and bodies went first, each cut marked with what it lost.
    expect(doc.truncated.fields).toContain('httpCheckResult.response.body');
    expect(doc.httpCheckResult.response.body).toMatch(/…\[truncated \d+ bytes\]$/);
    expect(doc.assertions).toEqual([expect.objectContaining({ source: 'STATUS_CODE', actual: 200 })]);
    console.log(
      `oversized result: ${doc.truncated.originalSizeBytes} bytes → ${Buffer.byteLength(rows[0]!.doc)} bytes stored; cut ${doc.truncated.fields.join(', ')}`,
    );
  }, 90_000);
});
