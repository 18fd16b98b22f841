// Preload (`node --import`) for before/after runs: marks kafkajs's Encoder as already patched, so
// effectd's Encoder fix (src/shared/kafkajs-encoder-fix.ts) leaves it as kafkajs ships it. Reaches
// effectd's processes through EFFECTD_NODE_ARGS, the bench's own (the SDK's EffectClient) on its command line.
import { createRequire } from 'node:module';

const Encoder = createRequire(import.meta.url)('kafkajs/src/protocol/encoder.js') as Record<symbol, unknown>;
Encoder[Symbol.for('effectd.kafkajs-encoder-fix')] = true;
