import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4 (the latest release) keeps every broker connection on a 1 ms timer while nothing is
 * pending: RequestQueue.scheduleCheckPendingRequests schedules a check with a negative delay when
 * the queue is empty and unthrottled, and the check schedules the next one (tulios/kafkajs#1556,
 * fix proposed in #1667, unreleased). An idle effectd woke ~1,700 times a second for it (≈ 40 ms of
 * CPU per second), and so does every agent process holding an EffectClient.
 *
 * With nothing pending there is nothing to check: a request that cannot go at once is queued by
 * `push`, which schedules the check itself (pending is then non-empty). Imported for its effect by
 * every module that makes a kafkajs client (the Kafka ingress, the lag watcher, the SDK's EffectClient).
 */
interface RequestQueue {
  pending: unknown[];
  scheduleCheckPendingRequests(): void;
}

const PATCHED = Symbol.for('effectd.kafkajs-idle-fix');

export function patchKafkajsIdleLoop(prototype: RequestQueue & { [PATCHED]?: true }): boolean {
  const original = prototype.scheduleCheckPendingRequests;
  if (typeof original !== 'function' || prototype[PATCHED]) return false;
  prototype.scheduleCheckPendingRequests = function (this: RequestQueue) {
    if (this.pending.length === 0) return;
    original.call(this);
  };
  prototype[PATCHED] = true;
  return true;
}

try {
  const require = createRequire(import.meta.url);
  patchKafkajsIdleLoop((require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueue }).prototype);
} catch {
  // Another kafkajs layout: nothing to patch (its request queue is not the one this fixes).
}
