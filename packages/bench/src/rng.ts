import { createHash } from 'node:crypto';
import { CodedError } from '../../../src/shared/coded-error.js';

/**
 * A seeded pseudo-random source (mulberry32). Every random choice of the benchmark (the model's
 * retries and rewordings, which request a fault hits, backoff jitter, keys) comes from one of these,
 * forked by label, so a cell's behaviour depends on its seed and name alone.
 */
export class Rng {
  private state: number;

  constructor(readonly seed: number, readonly label = '') {
    this.state = hash32(`${seed}:${label}`);
  }

  /** An independent stream for a sub-purpose: forking never shifts the parent's sequence. */
  fork(label: string): Rng {
    return new Rng(this.seed, `${this.label}/${label}`);
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new CodedError('internal', 'pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A UUID-shaped token, as SDKs generate for idempotency keys, but reproducible. */
  uuid(): string {
    const hex = Array.from({ length: 32 }, () => Math.floor(this.next() * 16).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  }
}

function hash32(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32LE(0);
}
