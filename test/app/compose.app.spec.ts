// The composition root builds the whole application in memory, with no data directory, no files
// and no processes: the app tier's fixture, and the proof the service's parts are passed in.
import { afterEach, describe, expect, it } from 'vitest';
import { workflowStream } from '../../src/core/streams.js';
import { memoryApp, steppedClock, type MemoryApp } from '../support/memory-app.js';

let running: MemoryApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const charge = (workflowId: string, amount = 1200) => ({ workflowId, step: 'charge', tool: 'payments.charge', args: { invoiceId: `INV-${workflowId}`, amount } });

describe('compose: the application in memory', () => {
  it('builds in well under a second and charges once through the gateway', async () => {
    const started = performance.now();
    running = memoryApp();
    const built = performance.now() - started;
    expect(built).toBeLessThan(1_000);
    const { app, provider } = running;
    const first = await app.gateway.submit(running.caller('agent'), charge('wf-compose'));
    const again = await app.gateway.submit(running.caller('agent'), charge('wf-compose'));
    expect(first.outcome.status).toBe('done');
    expect(again.outcome).toMatchObject({ status: 'done', replayed: true });
    expect(provider.made('payments.charge')).toHaveLength(1);
    const events = (await app.ledger.readStream(workflowStream('default', 'wf-compose'))).map((r) => r.event.type);
    expect(events).toEqual(['EffectDeclared', 'AttemptStarted', 'AttemptFinished']);
    expect(await app.health.ledgerReachable()).toBe(true);
  });

  it('uses the clock it is given (the recorded times are the clock\'s)', async () => {
    const clock = steppedClock();
    running = memoryApp({ clock });
    await running.app.gateway.submit(running.caller('agent'), charge('wf-clock'));
    const [declared] = await running.app.ledger.readStream(workflowStream('default', 'wf-clock'));
    expect(declared!.event.at).toBe(clock());
  });

  it('a lost reply is unknown, and the resubmission under the same key settles it without a second charge', async () => {
    running = memoryApp();
    const { app, provider } = running;
    provider.arm('payments.charge', { type: 'drop-after-mutation' });
    const lost = await app.gateway.submit(running.caller('agent'), charge('wf-lost'), { waitMs: 0 });
    expect(lost.outcome.status).toBe('unknown');
    const settled = await app.gateway.submit(running.caller('agent'), charge('wf-lost'));
    expect(settled.outcome.status).toBe('done');
    expect(provider.made('payments.charge')).toHaveLength(1);
    const keys = provider.calls.filter((c) => c.kind === 'dispatch').map((c) => c.key);
    expect(new Set(keys).size).toBe(1);
  });

  it('an operator of another tenant\'s credentials cannot be the agent: the gateway authenticates by the book it was given', () => {
    running = memoryApp();
    expect(() => running!.app.gateway.authenticate('not-a-token-of-this-book-000000', 'http')).toThrow();
    expect(running.caller('operator').role).toBe('operator');
  });
});
