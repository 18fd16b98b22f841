import http from 'node:http';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { httpExchange } from '../../src/providers/http-exchange.js';

/**
 * The provider client's one rule, against real sockets: only a request that provably never left is
 * `not-sent`; once a connection opened, anything short of a whole answer is `lost` (the effect's
 * state becomes unknown and is reconciled, never taken as failed).
 */
const servers: net.Server[] = [];
afterAll(() => servers.forEach((server) => server.close()));

async function listen(server: net.Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}
/** A raw TCP server that answers each connection's first bytes with `reply` (or not at all). */
function raw(reply: (socket: net.Socket) => void): Promise<string> {
  return listen(net.createServer((socket) => socket.once('data', () => reply(socket))));
}
const post = (url: string, timeoutMs = 1_000) => httpExchange({ method: 'POST', url: `${url}/v1/charges`, headers: { accept: 'application/json', 'content-type': 'application/json' }, body: '{"amount":1}', timeoutMs });

describe('httpExchange (undici): what a provider call that went wrong counts as', () => {
  it('a refused connection or an unknown host: not-sent', async () => {
    const closed = net.createServer();
    const url = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    expect(await post(url)).toMatchObject({ kind: 'not-sent', error: 'ECONNREFUSED' });
    expect(await post('http://no-such-host.invalid', 5_000)).toMatchObject({ kind: 'not-sent', error: 'ENOTFOUND' });
  });

  it('the connection reset after the request was written: lost, with the errno code', async () => {
    expect(await post(await raw((socket) => socket.destroy()))).toMatchObject({ kind: 'lost', error: 'ECONNRESET' });
  });

  it('a body cut short (fewer bytes than content-length): lost, not a response', async () => {
    const url = await raw((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"id":"ch_1"'));
    expect(await post(url)).toMatchObject({ kind: 'lost', error: expect.stringMatching(/^response broken: /) });
  });

  it('no answer, or headers and then silence, within the timeout: lost after the timeout', async () => {
    const silent = await listen(net.createServer(() => {}));
    const stalled = await raw((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"id":'));
    for (const url of [silent, stalled]) {
      const result = await post(url, 200);
      expect(result).toMatchObject({ kind: 'lost', error: 'timeout after 200 ms' });
      expect(result.latencyMs).toBeGreaterThanOrEqual(190);
    }
  });

  it('not HTTP at all: lost', async () => {
    expect(await post(await raw((socket) => socket.end('garbage\r\n\r\n')))).toMatchObject({ kind: 'lost' });
  });

  it('a whole answer: status, headers (repeated ones joined), JSON body; URL credentials go as Basic authorization', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const url = (await listen(http.createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(201, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
      res.end(JSON.stringify({ id: 'ch_1' }));
    }))).replace('http://', 'http://us%40r:p%3Ass@');
    const result = await post(url);
    expect(result).toMatchObject({ kind: 'response', status: 201, body: { id: 'ch_1' }, headers: { 'set-cookie': 'a=1, b=2' } });
    expect(seen[0]).toMatchObject({ authorization: `Basic ${Buffer.from('us@r:p:ss').toString('base64')}`, 'content-length': '12' });
  });

  it('keep-alive: 50 consecutive calls to one provider reuse their connections (undici opens a second one while the first is being released)', async () => {
    const connections = new Set<number>();
    const server = http.createServer((req, res) => {
      connections.add(req.socket.remotePort!);
      res.end('{}');
    });
    const url = await listen(server);
    for (let i = 0; i < 50; i++) expect(await post(url)).toMatchObject({ kind: 'response', status: 200 });
    expect(connections.size).toBeLessThanOrEqual(2);
  });
});
