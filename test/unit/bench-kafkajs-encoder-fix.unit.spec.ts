// kafkajs's Encoder as the bench's experiment patches it (packages/bench/src/kafka-clients/
// kafkajs-encoder-fix.ts: buffers from Node's pool without zero fill, varints written in place) must
// write exactly the bytes it wrote before: the same records, batches and varints, before and after.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
type Chain = Record<string, (...args: unknown[]) => Chain> & { buffer: Buffer; buf: Buffer };
interface Kafkajs {
  Encoder: new () => Chain;
  Record(record: object): Chain;
  RecordBatch(batch: object): Promise<Chain>;
}
const Long = require('kafkajs/src/utils/long.js') as { fromValue(value: unknown): unknown };

/**
 * A copy of kafkajs's encoding modules of its own (unit files share a worker's modules, so the one
 * kafkajs may be patched already by a file that imported the Kafka ingress or the SDK).
 */
function freshKafkajs(): Kafkajs {
  const files = ['encoder.js', 'recordBatch/header/v0/index.js', 'recordBatch/record/v0/index.js', 'recordBatch/v0/index.js'].map((f) => require.resolve(`kafkajs/src/protocol/${f}`));
  const saved = files.map((f) => require.cache[f]);
  for (const f of files) delete require.cache[f];
  try {
    return {
      Encoder: require(files[0]!) as Kafkajs['Encoder'],
      Record: require(files[2]!) as Kafkajs['Record'],
      RecordBatch: (require(files[3]!) as { RecordBatch: Kafkajs['RecordBatch'] }).RecordBatch,
    };
  } finally {
    files.forEach((f, i) => {
      if (saved[i]) require.cache[f] = saved[i];
      else delete require.cache[f];
    });
  }
}

const big = Buffer.from(Array.from({ length: 9_000 }, (_, i) => i % 251));
const varints = [0, 1, -1, 63, 64, -64, -65, 127, 128, 8_191, 8_192, 2 ** 28, -(2 ** 28), 2 ** 30 - 1, -(2 ** 30), 2 ** 31 - 1, -(2 ** 31)];
const varlongs: unknown[] = [0, 5, -1, 1_700_000_000_000, -(2 ** 30), 2 ** 30 - 1, 2 ** 30, Long.fromValue(42), Long.fromValue('-9000000000000'), '77'];
const records = [
  { key: Buffer.from('workflow-1'), value: Buffer.from('x'.repeat(300)), headers: { authorization: 'Bearer abc', 'effectd-correlation-id': Buffer.from('c-1') } },
  { offsetDelta: 1, timestampDelta: 3, key: null, value: big, headers: { many: ['a', Buffer.from('b')] } },
  { offsetDelta: 70, timestampDelta: 2 ** 31, key: 'k', value: null },
];

async function encodeAll({ Encoder, Record, RecordBatch }: Kafkajs): Promise<string[]> {
  const out = [
    ...varints.map((v) => new Encoder().writeVarInt!(v).buffer),
    ...varints.filter((v) => v >= 0).map((v) => new Encoder().writeUVarInt!(v).buffer),
    ...varlongs.map((v) => new Encoder().writeVarLong!(v).buffer),
    new Encoder().writeInt32!(7).writeBytes!(big).writeString!('é'.repeat(600)).writeVarIntString!('tail').buffer,
    ...records.map((r) => Record(r).buffer),
    (await RecordBatch({ firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_003, lastOffsetDelta: 2, records: records.map(Record) })).buffer,
  ];
  return out.map((b) => b.toString('hex'));
}

describe('kafkajs Encoder without zero fill', () => {
  it('writes the same bytes as the unpatched Encoder', async () => {
    const kafkajs = freshKafkajs();
    const before = await encodeAll(kafkajs);
    const { patchKafkajsEncoder } = await import('../../packages/bench/src/kafka-clients/kafkajs-encoder-fix.js');
    expect(patchKafkajsEncoder(kafkajs.Encoder as never)).toBe(true);
    expect(new kafkajs.Encoder().buf.length).toBe(0); // patched: no buffer until the first write
    expect(await encodeAll(kafkajs)).toEqual(before);
    expect(patchKafkajsEncoder(kafkajs.Encoder as never)).toBe(false); // once only
  });
});
