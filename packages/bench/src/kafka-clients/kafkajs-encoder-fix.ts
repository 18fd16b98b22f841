import { createRequire } from 'node:module';

/**
 * An experiment of issue 31 item 3, not in the service: kafkajs 2.2.4 makes an `Encoder` per record,
 * per header, per record batch and per request, each a zero-filled 512-byte `Buffer.alloc` (its own
 * ArrayBuffer), grown by another `Buffer.alloc` and a copy; every varint is a `Buffer.from([...])`.
 * The profile in docs/benchmark.md ("Where the CPU goes") pointed at these allocations.
 *
 * An Encoder writes strictly forward and hands out only `buf.slice(0, offset)`, so its bytes need no
 * zero fill: the constructor's buffer is made empty (the sizing static returns 0 — the constructor is
 * its only caller) and the first write takes 512 bytes from Node's shared pool (`allocUnsafe`, a
 * slice of an 8 KB chunk below 4 KB), growing the same way; varints are written in place. Measured
 * (encode-bench.ts, echo-bench.ts `kafkajs-encoder`): 4–6 µs less per produced record, about 2 % of
 * a client's CPU per round trip — too little to patch kafkajs in the service for
 * (docs/benchmark.md, "Kafka clients compared").
 */
interface EncoderClass {
  nextPowerOfTwo(value: number): number;
  encodeZigZag(value: number): number;
  prototype: Encoder;
}

interface Encoder {
  buf: Buffer;
  offset: number;
  ensureAvailable(length: number): void;
  writeUVarInt(value: number): Encoder;
  writeVarLong(value: unknown): Encoder;
}

const PATCHED = Symbol.for('effectd.kafkajs-encoder-fix');
const FIRST_SIZE = 512;
/** |value| below 2^30: its 64-bit zigzag equals the 32-bit one, an unsigned 31-bit number. */
const SMALL = 2 ** 30;

export function patchKafkajsEncoder(encoder: EncoderClass & { [PATCHED]?: true }): boolean {
  const proto = encoder.prototype;
  const originalVarLong = proto.writeVarLong;
  if (typeof proto.ensureAvailable !== 'function' || typeof originalVarLong !== 'function' || encoder[PATCHED]) return false;
  const powerOfTwo = (value: number) => 1 << (32 - Math.clz32(value));
  encoder.nextPowerOfTwo = () => 0;
  proto.ensureAvailable = function (this: Encoder, length: number) {
    const needed = this.offset + length;
    if (needed <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(FIRST_SIZE, powerOfTwo(needed)));
    this.buf.copy(grown, 0, 0, this.offset);
    this.buf = grown;
  };
  proto.writeUVarInt = function (this: Encoder, value: number) {
    this.ensureAvailable(5);
    let rest = value;
    while ((rest & 0xffffff80) !== 0) {
      this.buf[this.offset++] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    this.buf[this.offset++] = rest & 0x7f;
    return this;
  };
  proto.writeVarLong = function (this: Encoder, value: unknown) {
    if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) < SMALL) return this.writeUVarInt(encoder.encodeZigZag(value));
    return originalVarLong.call(this, value);
  };
  encoder[PATCHED] = true;
  return true;
}

try {
  const require = createRequire(import.meta.url);
  // Only the release read: the sizing static's one caller is the constructor there.
  if ((require('kafkajs/package.json') as { version: string }).version === '2.2.4') patchKafkajsEncoder(require('kafkajs/src/protocol/encoder.js') as EncoderClass);
} catch {
  // Another kafkajs layout: nothing to patch.
}
