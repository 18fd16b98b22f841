/**
 * kafkajs's produce-request encoding alone, with and without effectd's Encoder fix
 * (kafkajs-encoder-fix.ts): CPU µs per record, each variant in its own process, taking
 * turns. A batch is what the ingress sends: `--records` answers (~300 B, one header) per request.
 *
 *   node packages/bench/dist/packages/bench/src/kafka-clients/encode-bench.js [--rounds 6] [--requests 20000] [--records 8]
 */
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

type Variant = 'kafkajs' | 'kafkajs-encoder';
const require = createRequire(import.meta.url);

async function measure(variant: Variant, requests: number, records: number): Promise<number> {
  if (variant === 'kafkajs-encoder') await import('./kafkajs-encoder-fix.js');
  const Produce = require('kafkajs/src/protocol/requests/produce/v3/request.js') as (request: object) => { encode(): Promise<{ buffer: Buffer }> };
  const value = Buffer.alloc(300, 'x');
  const messages = Array.from({ length: records }, (_, i) => ({ key: Buffer.from(`workflow-${i}`), value, headers: { 'effectd-correlation-id': `c-${i}-0123456789abcdef0123` } }));
  const request = () => Produce({ acks: -1, timeout: 30_000, topicData: [{ topic: 'effectd.outcomes', partitions: [{ partition: 0, messages }] }] }).encode();
  for (let i = 0; i < 2_000; i++) await request();
  const before = process.cpuUsage();
  for (let i = 0; i < requests; i++) await request();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / (requests * records);
}

async function main(): Promise<void> {
  const [role, variant, requests, records] = process.argv.slice(2);
  if (role === 'measure') {
    process.send!(await measure(variant as Variant, Number(requests), Number(records)));
    return;
  }
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '6' }, requests: { type: 'string', default: '20000' }, records: { type: 'string', default: '8' } } });
  const results: Record<Variant, number[]> = { kafkajs: [], 'kafkajs-encoder': [] };
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const variant of (round % 2 ? ['kafkajs-encoder', 'kafkajs'] : ['kafkajs', 'kafkajs-encoder']) as Variant[]) {
      const child = fork(fileURLToPath(import.meta.url), ['measure', variant, values.requests, values.records]);
      results[variant].push(await new Promise<number>((resolve) => child.once('message', (us) => resolve(us as number))));
      child.kill();
    }
  }
  for (const [variant, list] of Object.entries(results)) {
    const sorted = [...list].sort((a, b) => a - b);
    console.log(`${variant.padEnd(16)} CPU µs per record: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} (${list.map((v) => v.toFixed(2)).join(', ')})`);
  }
}

void main();
