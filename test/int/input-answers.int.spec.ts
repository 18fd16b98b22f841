import { chmodSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpServer } from '../../src/api/http-server.js';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, startPayments, tempDir, writeFastPaymentsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

/**
 * Inputs effectd used to answer wrongly (issue 13, items 6 and 8): each is refused with the status
 * and a message that says what is really wrong, nothing is recorded and the provider is not called.
 */

interface Answer { status: number; body: any }

async function send(url: string, body: string, headers: Record<string, string>, contentType: string | undefined = 'application/json'): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers: { ...(contentType ? { 'content-type': contentType } : {}), ...headers }, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* text */
  }
  return { status: res.status, body: parsed };
}

describe('inputs answered for what they are', () => {
  let payments: RunningSimulator;
  let effectd: InProcessEffectd;
  let n = 0;
  const ledgerSize = async () => (await effectd.runtime.ledger.readAll(0, 1_000_000)).length;
  const providerRequests = async () => ((await getJson(`${payments.url}/_admin/requests`)).body.requests as unknown[]).length;
  const charges = async () => ((await getJson(`${payments.url}/_oracle/state`)).body as { charges: { amount: number }[] }).charges;
  const fresh = () => `wf-answers-${++n}`;
  /** `{"workflowId": …, "step": 1, "tool": "payments.charge", "args": {…}}` as text, so numbers and escapes stay as written. */
  const commandText = (workflowId: string, argsText: string, extra = '') => `{"workflowId":${JSON.stringify(workflowId)},"step":1,"tool":"payments.charge","args":${argsText}${extra}}`;

  /** Sends, then asserts the status, the message, the field paths, an unchanged ledger, no provider call and no workflow. */
  async function refused(send: () => Promise<Answer>, status: number, message: RegExp, paths: string[] = [], workflowId?: string): Promise<Answer> {
    const [events, calls] = [await ledgerSize(), await providerRequests()];
    const answer = await send();
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    expect(answer.body.message).toMatch(message);
    for (const path of paths) expect(answer.body.fields.map((f: { path: string }) => f.path)).toContain(path);
    expect(await ledgerSize()).toBe(events);
    expect(await providerRequests()).toBe(calls);
    if (workflowId !== undefined) expect((await getJson(`${effectd.url}/v1/workflows/${encodeURIComponent(workflowId)}`, effectd.operator)).status).toBe(404);
    return answer;
  }
  const effect = (text: string, contentType?: string) => () => send(`${effectd.url}/v1/effects`, text, effectd.agent, contentType);

  beforeAll(async () => {
    payments = await startPayments();
    effectd = await startEffectd({ providerUrls: { payments: payments.url } });
  });
  afterAll(async () => {
    await effectd.close();
    await payments.close();
  });

  describe('amounts (item 6): one meaning, or refused with the accepted forms', () => {
    it('a string of bare digits is ambiguous: refused, showing both readings', async () => {
      const id = fresh();
      const answer = await refused(effect(commandText(id, '{"invoiceId":"INV-A1","amount":"49"}')), 400, /args\.amount: "49" is ambiguous: it reads as 0\.49 USD \(49 minor units\) or as 49\.00 USD, and nothing is sent on a guess/, ['args.amount'], id);
      expect(answer.body.error).toBe('invalid_command');
    });

    it('a JSON number written with a decimal point (49.00) is refused: JSON numbers are minor units', async () => {
      const id = fresh();
      await refused(effect(commandText(id, '{"invoiceId":"INV-A2","amount":49.00}')), 400, /args\.amount: 49\.00 is ambiguous: as a JSON number it reads as 0\.49 USD \(49 minor units\), while its decimal point suggests 49\.00 USD/, ['args.amount'], id);
      // The currency field decides the scale of the suggestion.
      await refused(effect(commandText(id, '{"invoiceId":"INV-A2","amount":49.000,"currency":"kwd"}')), 400, /49\.000 is ambiguous: as a JSON number it reads as 0\.049 KWD \(49 minor units\), while its decimal point suggests 49\.000 KWD/, ['args.amount'], id);
    });

    it('a JSON number written with an exponent (4.9e3) is refused: write the plain integer', async () => {
      const id = fresh();
      await refused(effect(commandText(id, '{"invoiceId":"INV-A3","amount":4.9e3}')), 400, /JSON numbers are minor units written as plain integers: write 4900 instead of 4\.9e3/, ['args.amount'], id);
    });

    it('a fractional JSON number is refused on every ingress by the arg schema: not a whole number of minor units', async () => {
      const id = fresh();
      await refused(effect(commandText(id, '{"invoiceId":"INV-A4","amount":49.5}')), 400, /JSON numbers are minor units, and 49\.5 is not a whole number of them: write 4950 \(minor units\) or "49\.50 USD"/, ['args.amount'], id);
    });

    it('a decision is checked by the same rule: nothing is journaled', async () => {
      const id = fresh();
      await refused(() => send(`${effectd.url}/v1/workflows/${id}/decisions`, '{"step":1,"tool":"payments.charge","args":{"invoiceId":"INV-A5","amount":49.00}}', effectd.agent), 400, /49\.00 is ambiguous: as a JSON number it reads as 0\.49 USD/, ['args.amount'], id);
      await refused(() => send(`${effectd.url}/v1/workflows/${id}/decisions`, '{"step":1,"tool":"payments.charge","args":{"invoiceId":"INV-A5","amount":"4900"}}', effectd.agent), 400, /"4900" is ambiguous/, ['args.amount'], id);
    });

    it('the forms that cannot be misread charge what they say', async () => {
      const cases: [string, number][] = [['4900', 4900], ['"49.00"', 4900], ['"49.00 USD"', 4900], ['"USD 49.00"', 4900], ['"49 USD"', 4900], ['"7.5"', 750]];
      for (const [amount, minor] of cases) {
        const before = (await charges()).length;
        const answer = await send(`${effectd.url}/v1/effects`, commandText(fresh(), `{"invoiceId":"INV-OK-${n}","amount":${amount}}`), effectd.agent);
        expect(answer.body, amount).toMatchObject({ status: 'done' });
        const after = await charges();
        expect(after).toHaveLength(before + 1);
        expect(after[after.length - 1]!.amount, amount).toBe(minor);
      }
      // Only money fields care how a number was written: step 2.0 is step 2.
      const step = await send(`${effectd.url}/v1/effects`, `{"workflowId":"${fresh()}","step":2.0,"tool":"payments.charge","args":{"invoiceId":"INV-STEP","amount":100}}`, effectd.agent);
      expect(step.body.status).toBe('done');
    });
  });

  describe('identifiers (item 8): well-formed text, one workflowId limit everywhere', () => {
    it('a lone surrogate in workflowId, step, slot, tool or tenant is 400 naming the field (not a 500 from the stream name)', async () => {
      const lone = '"\\ud800"';
      await refused(effect(`{"workflowId":${lone},"step":1,"tool":"payments.charge","args":{"invoiceId":"INV-S","amount":100}}`), 400, /workflowId: workflowId must be well-formed Unicode text: it contains a lone surrogate/, ['workflowId']);
      await refused(effect(`{"workflowId":"${fresh()}","step":"a\\udc00","tool":"payments.charge","args":{"invoiceId":"INV-S","amount":100}}`), 400, /step must be well-formed Unicode text/, ['step']);
      await refused(effect(`{"workflowId":"${fresh()}","step":1,"slot":${lone},"tool":"payments.charge","args":{"invoiceId":"INV-S","amount":100}}`), 400, /slot must be well-formed Unicode text/, ['slot']);
      await refused(effect(`{"workflowId":"${fresh()}","step":1,"tool":"payments.charge\\ud800","args":{"invoiceId":"INV-S","amount":100}}`), 400, /tool must be well-formed Unicode text/, ['tool']);
      await refused(() => send(`${effectd.url}/v1/effects`, `{"workflowId":"${fresh()}","tenant":${lone},"step":1,"tool":"payments.charge","args":{"invoiceId":"INV-S","amount":100}}`, effectd.operator), 400, /tenant must be well-formed Unicode text/, ['tenant']);
      await refused(() => send(`${effectd.url}/v1/effects`, `{"workflowId":"${fresh()}","tenant":${lone},"step":1,"tool":"saga:trip-booking","args":{}}`, effectd.operator), 400, /tenant must be well-formed Unicode text/, ['tenant']);
      await refused(() => send(`${effectd.url}/v1/sagas`, `{"saga":"trip-booking","workflowId":${lone},"input":{}}`, effectd.agent), 400, /workflowId must be well-formed Unicode text/, ['workflowId']);
      await refused(() => send(`${effectd.url}/v1/workflows/wf-ok/decisions`, `{"step":${lone},"tool":"payments.charge","args":{"invoiceId":"INV-S","amount":100}}`, effectd.agent), 400, /step must be well-formed Unicode text/, ['step']);
      // A URL cannot carry a lone surrogate (its UTF-8 form %ED%A0%80 is no UTF-8): still 400, never 500.
      for (const path of ['/v1/workflows/%ED%A0%80', '/v1/workflows/%ED%A0%80/history', '/v1/sagas/%ED%A0%80']) {
        expect((await getJson(`${effectd.url}${path}`, effectd.agent)).status, path).toBe(400);
      }
    });

    it('a 10 kB workflowId is refused by every path that takes one, body or URL (at most 256 characters)', async () => {
      const long = 'w'.repeat(10_000);
      await refused(() => send(`${effectd.url}/v1/workflows/${long}/decisions`, '{"step":1,"tool":"payments.charge","args":{"invoiceId":"INV-L","amount":100}}', effectd.agent), 400, /workflowId: workflowId is at most 256 characters/, ['workflowId']);
      await refused(effect(commandText(long, '{"invoiceId":"INV-L","amount":100}')), 400, /workflowId is at most 256 characters/, ['workflowId']);
      await refused(effect(`{"workflowId":"${long}","step":1,"tool":"saga:trip-booking","args":{}}`), 400, /workflowId is at most 256 characters/, ['workflowId']);
      await refused(() => send(`${effectd.url}/v1/sagas`, `{"saga":"trip-booking","workflowId":"${long}","input":{}}`, effectd.agent), 400, /workflowId is at most 256 characters/, ['workflowId']);
      for (const path of [`/v1/workflows/${long}`, `/v1/workflows/${long}/decisions`, `/v1/workflows/${long}/history`, `/v1/sagas/${long}`]) {
        const answer = await getJson(`${effectd.url}${path}`, effectd.agent);
        expect(answer.status, path.slice(0, 40)).toBe(400);
        expect(answer.body.message).toMatch(/workflowId: workflowId is at most 256 characters/);
      }
    });
  });

  describe('bodies (item 8)', () => {
    it('a body that is not JSON is 415 with what to send; application/json and application/*+json (UTF-8) are read', async () => {
      const text = commandText(fresh(), '{"invoiceId":"INV-CT","amount":100}');
      await refused(effect(text, 'text/plain'), 415, /the request body must be JSON: send it with Content-Type: application\/json \(or application\/\*\+json\), not "text\/plain"/);
      await refused(effect(text, 'application/x-www-form-urlencoded'), 415, /must be JSON.*not "application\/x-www-form-urlencoded"/);
      await refused(() => fetch(`${effectd.url}/v1/effects`, { method: 'POST', headers: effectd.agent, body: new Blob([text]) }).then(async (r) => ({ status: r.status, body: await r.json() })), 415, /not without a Content-Type/);
      await refused(effect(text, 'application/json; charset=latin1'), 415, /must be JSON in UTF-8/);
      for (const type of ['application/json; charset=utf-8', 'application/vnd.effectd+json', 'Application/JSON;charset="UTF-8"']) {
        const answer = await send(`${effectd.url}/v1/effects`, commandText(fresh(), `{"invoiceId":"INV-CT-${n}","amount":100}`), effectd.agent, type);
        expect(answer.body.status, type).toBe('done');
      }
      // An empty POST is no body: an operator's release without one still reaches the gateway (which asks for a reason).
      const release = await fetch(`${effectd.url}/v1/effects/eff_nope/release`, { method: 'POST', headers: effectd.operator });
      expect(release.status).toBe(400);
      expect(((await release.json()) as { message: string }).message).toMatch(/a release needs a reason/);
    });

    it('a body of null (or 5) is answered as what it is, not "not valid JSON"', async () => {
      const answer = await refused(effect('null'), 400, /the command must be a JSON object/);
      expect(answer.body.message).not.toMatch(/not valid JSON/);
      await refused(effect('5'), 400, /the command must be a JSON object/);
      await refused(() => send(`${effectd.url}/v1/workflows/wf-null/decisions`, 'null', effectd.agent), 400, /invalid decision/);
      await refused(effect('{"workflowId": '), 400, /not valid JSON/);
    });

    it('__proto__, constructor and prototype keys in args (or a saga input) are 400 naming the path, not dropped', async () => {
      const id = fresh();
      await refused(effect(commandText(id, '{"invoiceId":"INV-P","amount":100,"__proto__":{"admin":true}}')), 400, /args\.__proto__: "__proto__" is not accepted as a key/, ['args.__proto__'], id);
      await refused(effect(commandText(id, '{"invoiceId":"INV-P","amount":100,"constructor":{"prototype":{}}}')), 400, /args\.constructor: "constructor" is not accepted/, ['args.constructor'], id);
      await refused(effect(commandText(id, '{"invoiceId":{"x":[{"prototype":1}]},"amount":100}')), 400, /args\.invoiceId\.x\.0\.prototype/, ['args.invoiceId.x.0.prototype'], id);
      await refused(() => send(`${effectd.url}/v1/workflows/${id}/decisions`, '{"step":1,"tool":"payments.charge","args":{"invoiceId":"INV-P","amount":100,"__proto__":{}}}', effectd.agent), 400, /args\.__proto__/, ['args.__proto__'], id);
      await refused(() => send(`${effectd.url}/v1/sagas`, `{"saga":"trip-booking","workflowId":"${id}","input":{"tripId":"T1","__proto__":{}}}`, effectd.agent), 400, /input\.__proto__/, ['input.__proto__'], id);
      await refused(effect(`{"workflowId":"${id}","step":1,"tool":"saga:trip-booking","args":{"tripId":"T1","constructor":1}}`), 400, /args\.constructor/, ['args.constructor'], id);
      // Checked at any nesting depth, without a stack overflow (nearly 1 MB of nested arrays).
      const deep = `${'['.repeat(300_000)}{"__proto__":1}${']'.repeat(300_000)}`;
      await refused(effect(commandText(id, `{"invoiceId":${deep},"amount":100}`)), 400, /args\.invoiceId\.0\.0\..*\.__proto__/, [], id);
    });
  });

  describe('messages that say what is really wrong (item 8)', () => {
    it('step -1 or 1.5 is not "required": it says what a step is and what was sent', async () => {
      for (const [step, shown] of [['-1', '-1'], ['1.5', '1.5'], ['true', 'a boolean']] as const) {
        const answer = await refused(effect(`{"workflowId":"${fresh()}","step":${step},"tool":"payments.charge","args":{"invoiceId":"INV-M","amount":100}}`), 400, new RegExp(`step: step must be a whole number ≥ 0 or a name \\(e\\.g\\. 3 or "charge"\\), not ${shown.replace('.', '\\.')}`), ['step']);
        expect(answer.body.message).not.toMatch(/required/);
      }
      await refused(effect(`{"workflowId":"${fresh()}","tool":"payments.charge","args":{"invoiceId":"INV-M","amount":100}}`), 400, /step is required/, ['step']);
    });

    it('amount 1e309, true or {} is not "required": it says why the value is no amount', async () => {
      const cases: [string, RegExp][] = [
        ['1e309', /args\.amount: the amount is out of range \(a JSON number that large reads as Infinity\)/],
        ['true', /args\.amount: the amount must be a JSON integer of minor units.* not a boolean/],
        ['{}', /args\.amount: the amount must be .* not an object/],
        ['null', /args\.amount: the amount must be .* not null/],
      ];
      for (const [amount, message] of cases) {
        const answer = await refused(effect(commandText(fresh(), `{"invoiceId":"INV-M","amount":${amount}}`)), 400, message, ['args.amount']);
        expect(answer.body.message).not.toMatch(/required/);
      }
      await refused(effect(commandText(fresh(), '{"invoiceId":"INV-M"}')), 400, /args\.amount: amount is required/, ['args.amount']);
    });
  });

  describe('HTTP limits (item 8): a slow or silent client gives its connection up', () => {
    let server: HttpServer;
    beforeAll(async () => {
      server = await startHttpServer(effectd.runtime, 0, '127.0.0.1', { headersTimeoutMs: 500, requestTimeoutMs: 1_000, keepAliveTimeoutMs: 300, maxConnections: 3 });
    });
    afterAll(async () => {
      await server.close();
    });

    const open = () => new Promise<Socket>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () => resolve(socket));
      socket.once('error', reject);
    });
    /** Resolves with what the server wrote and how long until it closed the connection. */
    const untilClosed = (socket: Socket) => new Promise<{ ms: number; reply: string }>((resolve) => {
      const started = Date.now();
      let reply = '';
      socket.on('data', (d: Buffer) => (reply += d.toString()));
      socket.on('error', () => {});
      socket.once('close', () => resolve({ ms: Date.now() - started, reply }));
    });

    it('a body that trickles in is cut off at the request timeout (408), nothing recorded', async () => {
      const [events, calls] = [await ledgerSize(), await providerRequests()];
      const socket = await open();
      const closed = untilClosed(socket);
      const body = commandText(fresh(), '{"invoiceId":"INV-SLOW","amount":100}');
      socket.write(`POST /v1/effects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: ${effectd.agent.authorization}\r\nContent-Length: ${body.length}\r\n\r\n`);
      const trickle = setInterval(() => socket.writable && socket.write(' '), 200);
      const { ms, reply } = await closed;
      clearInterval(trickle);
      expect(reply).toMatch(/^HTTP\/1\.1 408/);
      expect(ms).toBeLessThan(3_000);
      expect(await ledgerSize()).toBe(events);
      expect(await providerRequests()).toBe(calls);
    });

    it('a connection that sends no headers is closed at the headers timeout; an idle keep-alive one after the keep-alive timeout', async () => {
      const silent = await open();
      const { ms } = await untilClosed(silent);
      expect(ms).toBeLessThan(2_500);

      const idle = await open();
      const closed = untilClosed(idle);
      idle.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      const { reply, ms: idleMs } = await closed;
      expect(reply).toMatch(/^HTTP\/1\.1 200/);
      expect(idleMs).toBeLessThan(2_000);
    });

    it('connections over the cap are refused', async () => {
      const held = await Promise.all([open(), open(), open()]);
      const extra = await open();
      const { ms } = await untilClosed(extra);
      expect(ms).toBeLessThan(500);
      for (const socket of held) socket.destroy();
    });
  });
});

describe('an unknown answer says how it will really be settled (item 8)', () => {
  let payments: RunningSimulator;
  beforeAll(async () => {
    payments = await startPayments();
  });
  afterAll(async () => {
    await payments.close();
  });
  const lostReply = () => postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });

  it('a tool without a lookup but with a key: effectd resends under the same key, it does not "check with the provider"', async () => {
    const dir = tempDir();
    const effectd = await startEffectd({ dataDir: dir, configFile: writeFastPaymentsConfig(dir, payments.url, 2_000) });
    try {
      await lostReply();
      // The words of the unknown answer itself: asked for at once, before an inline settle would resend.
      const answer = await postJson(`${effectd.url}/v1/effects`, { workflowId: 'wf-nolookup', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-NL', amount: 100 } }, { ...effectd.agent, prefer: 'wait=0' });
      expect(answer.body.status).toBe('unknown');
      expect(answer.body.message).toMatch(/the provider offers no way to look it up, so effectd will send the same request again under the same idempotency key, which the provider deduplicates/);
      expect(answer.body.message).not.toMatch(/checking with the provider/);
      expect(answer.body.checking).toMatch(/resending the same request under the same idempotency key/);
      expect(answer.body.checking).not.toMatch(/asking the provider whether reference/);
    } finally {
      await effectd.close();
    }
  });

  it('a tool with neither a lookup nor a key: a human will confirm it, and no answer time is promised', async () => {
    const dir = tempDir();
    const configFile = join(dir, 'keyless.config.json');
    writeFileSync(configFile, JSON.stringify({
      builtinTools: false,
      providers: { payments: { baseUrl: payments.url } },
      tools: [{
        name: 'payments.charge', provider: 'payments',
        request: { path: '/v1/charges', body: { amount: '{args.amount}', currency: '{args.currency}', metadata: { invoice_id: '{args.invoiceId}' } } },
        args: { invoiceId: { type: 'string' }, amount: { type: 'money', currencyField: 'currency' }, currency: { type: 'currency', default: 'usd' } },
        target: 'invoice {args.invoiceId}', reversibility: 'compensable', idempotency: { kind: 'none' }, receiptPath: 'id', timeoutMs: 2_000,
      }],
    }));
    const effectd = await startEffectd({ dataDir: dir, configFile });
    try {
      await lostReply();
      const answer = await postJson(`${effectd.url}/v1/effects`, { workflowId: 'wf-keyless', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-KL', amount: 100 } }, effectd.agent);
      expect(answer.body.status).toBe('unknown');
      expect(answer.body.message).toMatch(/effectd cannot find out by itself \(the tool has no lookup and the tool has no idempotency key\), so a human will confirm it with the provider/);
      expect(answer.body.message).not.toMatch(/checking with the provider|answer expected by/);
      expect(answer.body.expectAnswerBy).toBeUndefined();
    } finally {
      await effectd.close();
    }
  });
});

describe('the data dir is private (item 8): 0700, every file in it 0600', () => {
  const modes = (dir: string): [string, string][] => readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((name) => [name, (statSync(join(dir, name)).mode & 0o777).toString(8)]);

  it('a fresh start, an effect and a snapshot: the dir, the ledger with its -wal/-shm, the snapshot, the secret and the credentials', async () => {
    const payments = await startPayments();
    const dir = tempDir();
    chmodSync(dir, 0o755); // as `mkdir` with the usual umask leaves it
    const previous = process.umask(0o022);
    try {
      const effectd = await startEffectd({ dataDir: dir, providerUrls: { payments: payments.url } });
      const answer = await postJson(`${effectd.url}/v1/effects`, { workflowId: 'wf-modes', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-MODE', amount: 100 } }, effectd.agent);
      expect(answer.body.status).toBe('done');
      const files = modes(dir).map(([name]) => name);
      expect(files).toEqual(expect.arrayContaining(['ledger.db', 'ledger.db-wal', 'ledger.db-shm', 'secret', 'credentials.json', 'projections']));
      await effectd.close(); // writes the open-effects snapshot
      expect(modes(dir).some(([name]) => name.startsWith('projections/open-effects-'))).toBe(true);
      expect((statSync(dir).mode & 0o777).toString(8)).toBe('700');
      for (const [name, mode] of modes(dir)) expect(mode, name).toBe(statSync(join(dir, name)).isDirectory() ? '700' : '600');

      // Files an older effectd left 0644 in a 0755 dir are made private at the next start.
      chmodSync(dir, 0o755);
      chmodSync(join(dir, 'projections'), 0o755);
      for (const name of ['ledger.db', 'ledger.db-wal', 'ledger.db-shm']) if (modes(dir).some(([n]) => n === name)) chmodSync(join(dir, name), 0o644);
      const again = await startEffectd({ dataDir: dir, providerUrls: { payments: payments.url } });
      await again.close();
      expect((statSync(dir).mode & 0o777).toString(8)).toBe('700');
      for (const [name, mode] of modes(dir)) expect(mode, name).toBe(statSync(join(dir, name)).isDirectory() ? '700' : '600');
    } finally {
      process.umask(previous);
      await payments.close();
    }
  });

  it('a credentials file or secret others can read stops the start with the chmod to run', async () => {
    const dir = tempDir();
    const first = await startEffectd({ dataDir: dir });
    await first.close();
    chmodSync(join(dir, 'credentials.json'), 0o644);
    await expect(startEffectd({ dataDir: dir })).rejects.toThrow(/credentials\.json \(bearer tokens\) is accessible to other users \(mode 0644\).*chmod 600/);
    chmodSync(join(dir, 'credentials.json'), 0o600);
    chmodSync(join(dir, 'secret'), 0o640);
    await expect(startEffectd({ dataDir: dir })).rejects.toThrow(/secret \(the server secret.*\) is accessible to other users \(mode 0640\).*chmod 600/);
  });
});
