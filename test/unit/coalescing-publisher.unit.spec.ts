// The coalescing publisher (src/shared/coalescing-publisher.ts) that the Kafka ingress publishes
// answers and dead letters through, and the SDK's EffectClient its commands: what is published in
// one turn of the event loop goes in one produce request per topic, what comes while a request is
// in flight goes in the next, and every caller hears about its own message only.
import type { Producer, ProducerRecord } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { CoalescingPublisher, type Outgoing } from '../../src/shared/coalescing-publisher.js';

/** A producer whose sends the test completes (or fails) one at a time. */
function fakeProducer(fail: (record: ProducerRecord) => Error | undefined = () => undefined) {
  const sends: { record: ProducerRecord; done(): void }[] = [];
  const producer = {
    send(record: ProducerRecord) {
      return new Promise((resolve, reject) => {
        sends.push({ record, done: () => { const error = fail(record); if (error) reject(error); else resolve([]); } });
      });
    },
  } as unknown as Producer;
  return { producer, sends };
}

const msg = (topic: string, key: string): Outgoing => ({ topic, key, value: `v-${key}` });
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('CoalescingPublisher', () => {
  it('sends what is published in one turn of the event loop in one request, after the turn', async () => {
    const { producer, sends } = fakeProducer();
    const publisher = new CoalescingPublisher(producer);
    const acked = ['a', 'b', 'c'].map((k) => publisher.publish(msg('outcomes', k)));
    // Published from a continuation in the same turn (an answer settling after another): the same request.
    const late = Promise.resolve().then(() => publisher.publish(msg('outcomes', 'd')));
    expect(sends).toHaveLength(0); // nothing sent synchronously: the turn is the linger
    await turn();
    expect(sends).toHaveLength(1);
    expect(sends[0]!.record).toMatchObject({ topic: 'outcomes', acks: -1 });
    expect(sends[0]!.record.messages.map((m) => m.key)).toEqual(['a', 'b', 'c', 'd']);
    sends[0]!.done();
    await Promise.all([...acked, await late]);
  });

  it('queues what comes while a request is in flight and sends it together in the next one', async () => {
    const { producer, sends } = fakeProducer();
    const publisher = new CoalescingPublisher(producer);
    const first = publisher.publish(msg('outcomes', 'a'));
    await turn();
    const during = ['b', 'c'].map((k) => publisher.publish(msg('outcomes', k)));
    await turn();
    expect(sends).toHaveLength(1); // not sent while the first is in flight
    let firstAcked = false;
    void first.then(() => (firstAcked = true));
    let duringAcked = false;
    void Promise.all(during).then(() => (duringAcked = true));
    sends[0]!.done();
    await turn();
    expect([firstAcked, duringAcked]).toEqual([true, false]); // each promise is its own message's acknowledgement
    expect(sends).toHaveLength(2);
    expect(sends[1]!.record.messages.map((m) => m.key)).toEqual(['b', 'c']);
    sends[1]!.done();
    await Promise.all(during);
    // Idle again: the next message is sent on the next turn, not held.
    const after = publisher.publish(msg('outcomes', 'e'));
    await turn();
    expect(sends).toHaveLength(3);
    sends[2]!.done();
    await after;
  });

  it('one request per topic; a topic that fails fails only its own messages', async () => {
    const { producer, sends } = fakeProducer((record) => (record.topic === 'missing' ? new Error('unknown topic') : undefined));
    const publisher = new CoalescingPublisher(producer);
    const ok = [publisher.publish(msg('outcomes', 'a')), publisher.publish(msg('outcomes', 'b'))];
    const bad = publisher.publish(msg('missing', 'c'));
    await turn();
    expect(sends.map((s) => [s.record.topic, s.record.messages.length])).toEqual([['outcomes', 2], ['missing', 1]]);
    for (const s of sends) s.done();
    await expect(Promise.all(ok)).resolves.toBeDefined();
    await expect(bad).rejects.toThrow('unknown topic');
  });

  it('with a linger, an answer waits for the others being decided, and they go together once the last one is published', async () => {
    const { producer, sends } = fakeProducer();
    let deciding = 2;
    const publisher = new CoalescingPublisher(producer, { lingerMs: 60_000, more: () => deciding > 0 });
    const acked = [publisher.publish(msg('outcomes', 'a'))];
    await turn();
    expect(sends).toHaveLength(0); // two more on their way
    deciding = 1;
    acked.push(publisher.publish(msg('outcomes', 'b')));
    await turn();
    expect(sends).toHaveLength(0);
    deciding = 0;
    acked.push(publisher.publish(msg('outcomes', 'c'))); // the last one: no waiting for the linger to end
    await turn();
    expect(sends.map((s) => s.record.messages.map((m) => m.key))).toEqual([['a', 'b', 'c']]);
    sends[0]!.done();
    await Promise.all(acked);
  });

  it('a lone answer never lingers; one whose others are slow waits lingerMs at most', async () => {
    const { producer, sends } = fakeProducer();
    let deciding = 0;
    const publisher = new CoalescingPublisher(producer, { lingerMs: 30, more: () => deciding > 0 });
    const lone = publisher.publish(msg('outcomes', 'a'));
    await turn();
    expect(sends).toHaveLength(1);
    sends[0]!.done();
    await lone;
    await turn(); // the request is over
    deciding = 5; // five commands still at their provider
    const started = Date.now();
    const waiting = publisher.publish(msg('outcomes', 'b'));
    await turn();
    expect(sends).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(sends).toHaveLength(2);
    sends[1]!.done();
    await waiting;
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });
});
