import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { Tool } from '../../src/gateway/views/tool-catalog.js';
import { relayingUpstream, withUpstreamContent } from '../../src/mcp/upstream-relay.js';
import { callObserver } from '../../src/shared/call-observer.js';

const IMAGE = { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' };
const answer = (status: 'done' | 'not_done' | 'unknown', effectId = 'eff_1'): CallToolResult => ({
  isError: status === 'not_done', content: [{ type: 'text', text: `${status}: …` }], structuredContent: { status, effectId },
});
const toolOf = (reversibility: string) => ({ name: 'fixture.read', spec: { reversibility } }) as unknown as Tool;

/** A tool call's context that records the notifications the handler sends. */
function context(meta: Record<string, unknown> = {}) {
  const sent: unknown[] = [];
  const ctx = { mcpReq: { _meta: meta, notify: async (n: unknown) => void sent.push(n) } } as unknown as ServerContext;
  return { ctx, sent };
}

/** What a provider does during a dispatch (src/providers/mcp-provider.ts): progress, then its answer's content. */
async function dispatchReporting(reference: string, content: unknown[]): Promise<void> {
  await Promise.resolve();
  callObserver()?.progress?.({ progress: 50, total: 100, message: 'half' });
  callObserver()?.answered?.(reference, content);
}

describe('the upstream relay: what an upstream MCP tool says reaches the client waiting for it', () => {
  it('a read contract answered done gets its own dispatch\'s content blocks after effectd\'s text, and the progress goes to the client\'s token', async () => {
    const { ctx, sent } = context({ progressToken: 'p-1' });
    const result = await relayingUpstream(ctx, toolOf('read'), async () => {
      await dispatchReporting('eff_1', [IMAGE]);
      return answer('done');
    });
    expect(result.content).toEqual([{ type: 'text', text: 'done: …' }, IMAGE]);
    expect(result.structuredContent).toEqual({ status: 'done', effectId: 'eff_1' });
    expect(sent).toEqual([{ method: 'notifications/progress', params: { progressToken: 'p-1', progress: 50, total: 100, message: 'half' } }]);
  });

  it('a tool that changes the world is answered with its outcome only; progress still flows', async () => {
    const { ctx, sent } = context({ progressToken: 7 });
    const result = await relayingUpstream(ctx, toolOf('compensable'), async () => {
      await dispatchReporting('eff_1', [IMAGE]);
      return answer('done');
    });
    expect(result.content).toEqual([{ type: 'text', text: 'done: …' }]);
    expect(sent).toHaveLength(1);
  });

  it('no progressToken, no notification; outside the scope a provider sees no observer', async () => {
    const { ctx, sent } = context();
    await relayingUpstream(ctx, toolOf('read'), async () => {
      await dispatchReporting('eff_1', []);
      return answer('done');
    });
    expect(sent).toEqual([]);
    expect(callObserver()).toBeUndefined();
  });

  it('two calls at once each see only their own dispatch\'s progress and content', async () => {
    const one = context({ progressToken: 'one' });
    const two = context({ progressToken: 'two' });
    let open = (): void => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const [first, second] = await Promise.all([
      relayingUpstream(one.ctx, toolOf('read'), async () => {
        await gate;
        await dispatchReporting('eff_1', [IMAGE]);
        return answer('done', 'eff_1');
      }),
      relayingUpstream(two.ctx, toolOf('read'), async () => {
        await dispatchReporting('eff_2', [{ type: 'text', text: 'two' }]);
        open();
        return answer('done', 'eff_2');
      }),
    ]);
    expect(first.content).toEqual([{ type: 'text', text: 'done: …' }, IMAGE]);
    expect(second.content).toEqual([{ type: 'text', text: 'done: …' }, { type: 'text', text: 'two' }]);
    expect(one.sent.map((n) => (n as { params: { progressToken: string } }).params.progressToken)).toEqual(['one']);
    expect(two.sent.map((n) => (n as { params: { progressToken: string } }).params.progressToken)).toEqual(['two']);
  });

  it('only a done answer of the very effect that was dispatched gets content: not another effect\'s, not not_done, not unknown, not a replay', () => {
    const contents = new Map([['eff_1', [IMAGE]]]);
    expect(withUpstreamContent(answer('done', 'eff_2'), contents).content).toHaveLength(1);
    expect(withUpstreamContent(answer('not_done'), contents).content).toHaveLength(1);
    expect(withUpstreamContent(answer('unknown'), contents).content).toHaveLength(1);
    expect(withUpstreamContent(answer('done'), new Map()).content).toHaveLength(1);
    expect(withUpstreamContent(answer('done'), contents).content).toHaveLength(2);
  });
});
