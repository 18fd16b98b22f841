import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { BENCH_TIMINGS, keylessConsistentTools } from '../../packages/bench/src/bench-config.js';
import { FAULT_SPECS, faultApplies } from '../../packages/bench/src/faults.js';
import type { ProviderRecord } from '../../packages/bench/src/ground-truth.js';
import { judgeLateArrivals, referenceIn, type LateEffectView } from '../../packages/bench/src/late-arrivals.js';
import { ProviderProxy, type LateDelivery } from '../../packages/bench/src/provider-proxy.js';
import { workload } from '../../packages/bench/src/workloads.js';

const REF = 'eff_07739675ef43a2e308d9401ff7598f5efbf5b828';
const OTHER = 'eff_ccb9882a6dc0564519a68190aec44a4b1034bc43';
/** `status` null: the provider never answered. */
const delivery = (body: string, status: number | null = 200): LateDelivery => ({ method: 'POST', path: '/append-line', body, receivedAt: 1_000, deliveredAt: 3_500, ...(status !== null ? { status } : {}) });
const lineOf = (ref: string) => `{"file":"shipments.log","line":"ORD-1 packed and handed to the carrier [ref:${ref}]"}`;
/** Two journal lines of one intent: the late one (REF) and the new step's (OTHER). */
const records = new Map<string, ProviderRecord[]>([['{"kind":"line","token":"ORD-1"}', [
  { id: 'shipments.log:1', receipts: ['shipments.log:1', `ref:${OTHER}`] },
  { id: 'shipments.log:2', receipts: ['shipments.log:2', `ref:${REF}`] },
]]]);
const identity = [...records.keys()][0]!;
const effects = (view: Partial<LateEffectView>) => new Map([[REF, { effectId: REF, step: 'log-shipment', ...view }]]);

describe('late arrivals in the benchmark (the late-delivery fault)', () => {
  it('the fault runs only where a proof of absence exists: keyless tools with a consistent lookup (append-line), never on sagas', () => {
    expect([...keylessConsistentTools()]).toEqual(['weak.append-line']);
    const spec = FAULT_SPECS['late-delivery'];
    expect(faultApplies(spec, workload('append-line')!)).toBe(true);
    for (const name of ['charge', 'charge-v2', 'email-5', 'cloud-create', 'notify', 'charge-then-email', 'reminder-repeat', 'trip-booking', 'subscription-renewal']) expect(faultApplies(spec, workload(name)!), name).toBe(false);
    // Delivered after the caller's timeout plus the settle window (when effectd proves it absent), and audited within the cell's wait.
    expect(BENCH_TIMINGS.lateDeliveryMs).toBeGreaterThan(BENCH_TIMINGS.timeoutMs + BENCH_TIMINGS.settleWindowMs);
    expect(spec.awaitsAuditMs).toBeGreaterThan(BENCH_TIMINGS.absenceAuditMs);
  });

  it('finds effectd\'s reference in a request body, none in a baseline\'s', () => {
    expect(referenceIn(lineOf(REF))).toBe(REF);
    expect(referenceIn('{"metadata":{"effectd_ref":"' + REF + '"}}')).toBe(REF);
    expect(referenceIn('{"file":"shipments.log","line":"ORD-1 packed"}')).toBeUndefined();
  });

  it('detected: effectd recorded a late arrival naming the object; queued for an operator, so not a duplicate', () => {
    const score = judgeLateArrivals([delivery(lineOf(REF))], effects({ state: 'committed', receipt: `ref:${REF}`, lateArrival: { receipt: `ref:${REF}` }, duplicates: { unhandled: [`ref:${REF}`] } }), records, new Set([REF]));
    expect(score).toMatchObject({ injected: 1, detected: 1, undetected: 0 });
    expect(score.queuedByIdentity.get(identity)).toBe(1);
    expect(score.notes[0]).toMatch(/^log-shipment: late arrival detected: .*2500 ms .*LateArrivalDetected and queued it for an operator \(the tool declares no undo\)$/);
  });

  it('detected, nothing to queue: effectd found it by lookup before it ever said not_done', () => {
    const score = judgeLateArrivals([delivery(lineOf(REF))], effects({ state: 'committed', receipt: `ref:${REF}` }), records, new Set());
    expect(score).toMatchObject({ injected: 1, detected: 1, undetected: 0 });
    expect(score.queuedByIdentity.size).toBe(0);
  });

  it('undetected: effectd still says not_done (proven absent, never audited), or a baseline that stamps nothing', () => {
    const stale = judgeLateArrivals([delivery(lineOf(REF))], effects({ state: 'failed_before_effect' }), records, new Set([REF]));
    expect(stale).toMatchObject({ injected: 1, detected: 0, undetected: 1 });
    expect(stale.notes[0]).toMatch(/NOT detected: .*effectd says failed_before_effect/);
    // Committed with another receipt after a proof of absence (an operator's guess): not this object.
    expect(judgeLateArrivals([delivery(lineOf(REF))], effects({ state: 'committed', receipt: 'ref:eff_elsewhere' }), records, new Set([REF]))).toMatchObject({ detected: 0, undetected: 1 });
    const baseline = judgeLateArrivals([delivery('{"file":"shipments.log","line":"ORD-1 packed"}')], new Map(), records, new Set());
    expect(baseline).toMatchObject({ injected: 1, detected: 0, undetected: 1 });
    expect(baseline.notes[0]).toMatch(/carries no reference of effectd's/);
  });

  it('a late request the provider did not commit (refused, no answer) is no late arrival', () => {
    expect(judgeLateArrivals([delivery(lineOf(REF), 400), delivery(lineOf(REF), null)], new Map(), records, new Set())).toMatchObject({ injected: 0, detected: 0, undetected: 0 });
  });

  it('the proxy holds a deliver-late request, delivers it after delayMs, cuts the caller, and records the provider\'s answer', async () => {
    const seen: { at: number; body: string }[] = [];
    const provider = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ at: Date.now(), body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((ok) => provider.listen(0, '127.0.0.1', ok));
    const proxy = await ProviderProxy.start();
    try {
      proxy.retarget(`http://127.0.0.1:${(provider.address() as AddressInfo).port}`);
      let fired = 0;
      proxy.arm({ pathPrefix: '/append-line', nth: 1, action: 'deliver-late', delayMs: 300, hook: () => void fired++ });
      const sentAt = Date.now();
      const call = (body: string) => fetch(`${proxy.url}/append-line`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.status, () => 'cut');
      const first = call(lineOf(REF));
      expect(await call(lineOf(OTHER))).toBe(200); // the second goes straight through
      expect(await first).toBe('cut');
      await proxy.idle();
      expect(seen.map((s) => s.body)).toEqual([lineOf(OTHER), lineOf(REF)]);
      expect(seen[1]!.at - sentAt).toBeGreaterThanOrEqual(290);
      const [late] = proxy.lateDeliveries();
      expect(late).toMatchObject({ method: 'POST', path: '/append-line', body: lineOf(REF), status: 200 });
      expect(late!.deliveredAt - late!.receivedAt).toBeGreaterThanOrEqual(295);
      expect(proxy.stats()).toMatchObject({ seen: 2, fired: 1 });
      expect(fired).toBe(1);
      proxy.retarget(undefined);
      expect(proxy.lateDeliveries()).toEqual([]);
    } finally {
      await proxy.close();
      await new Promise<void>((ok) => provider.close(() => ok()));
    }
  });
});
