// kafkajs 2.2.4 keeps every idle broker connection on a 1 ms timer (tulios/kafkajs#1556); effectd
// patches its request queue (src/shared/kafkajs-idle-fix.ts). On the real broker: a
// connected, idle client checks its request queues a handful of times in a second,
// not about a thousand times per connection.
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import '../../src/shared/kafkajs-idle-fix.js';
import { patchKafkajsIdleLoop } from '../../src/shared/kafkajs-idle-fix.js';
import { testKafka } from '../support/kafka-harness.js';

const require = createRequire(import.meta.url);
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: { checkPendingRequests(): void } };

describe('kafkajs idle connections', () => {
  const admin = testKafka().admin();
  afterAll(async () => {
    await admin.disconnect();
  });

  it('an idle, connected client checks its request queues a few times a second, not on a 1 ms timer', async () => {
    await admin.connect();
    await admin.listTopics(); // a round trip: the queue has fulfilled a request
    const original = RequestQueue.prototype.checkPendingRequests;
    let checks = 0;
    RequestQueue.prototype.checkPendingRequests = function (this: unknown) {
      checks++;
      return original.call(this);
    };
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    } finally {
      RequestQueue.prototype.checkPendingRequests = original;
    }
    expect(checks).toBeLessThan(50);
  });

  it('the patch skips the check only when nothing is pending', () => {
    const calls: number[] = [];
    const prototype = { pending: [] as unknown[], scheduleCheckPendingRequests(this: { pending: unknown[] }) { calls.push(this.pending.length); } };
    expect(patchKafkajsIdleLoop(prototype)).toBe(true);
    expect(patchKafkajsIdleLoop(prototype)).toBe(false); // once
    prototype.scheduleCheckPendingRequests();
    prototype.pending.push('a request');
    prototype.scheduleCheckPendingRequests();
    expect(calls).toEqual([1]);
  });
});
