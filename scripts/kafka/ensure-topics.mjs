// Create the effectd topics if missing (replication factor 1) and warm up the group coordinator
// (so the first consumer group of a test does not wait for __consumer_offsets to be created).
//   EFFECTD_KAFKA_BROKERS  default 127.0.0.1:9092
// Usage: node scripts/kafka/ensure-topics.mjs [name:partitions ...]
// Without arguments: effectd.commands:6 effectd.outcomes:6 effectd.dlq:1
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;
const brokers = (process.env.EFFECTD_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',').map((s) => s.trim()).filter(Boolean);
const DEFAULT_TOPICS = ['effectd.commands:6', 'effectd.outcomes:6', 'effectd.dlq:1'];
const wanted = (process.argv.length > 2 ? process.argv.slice(2) : DEFAULT_TOPICS).map((spec) => {
  const [topic, parts] = spec.split(':');
  const numPartitions = Number(parts ?? 6);
  if (!topic || !Number.isInteger(numPartitions) || numPartitions < 1) throw new Error(`bad topic spec '${spec}'`);
  return { topic, numPartitions };
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const kafka = new Kafka({ clientId: 'effectd-ensure-topics', brokers, logLevel: logLevel.NOTHING });
const admin = kafka.admin();
let failed = false;
try {
  await admin.connect();
  const existing = new Set(await admin.listTopics());
  const missing = wanted.filter((t) => !existing.has(t.topic));
  if (missing.length) {
    await admin.createTopics({
      waitForLeaders: true,
      timeout: 30000,
      topics: missing.map((t) => ({ topic: t.topic, numPartitions: t.numPartitions, replicationFactor: 1 })),
    });
    console.log(`[kafka] created topics: ${missing.map((t) => `${t.topic}(${t.numPartitions})`).join(', ')}`);
  }
  const { topics } = await admin.fetchTopicMetadata({ topics: wanted.map((t) => t.topic) });
  for (const w of wanted) {
    const md = topics.find((t) => t.name === w.topic);
    const n = md?.partitions.length ?? 0;
    if (n !== w.numPartitions) {
      // Never repartition silently: it changes the key -> partition mapping of existing data.
      console.error(`[kafka] WARNING: topic ${w.topic} has ${n} partitions, expected ${w.numPartitions}`);
      failed = failed || n === 0;
    }
  }
  console.log(
    `[kafka] topics ok: ${wanted.map((w) => `${w.topic}(${topics.find((t) => t.name === w.topic)?.partitions.length})`).join(', ')}`,
  );

  // FindCoordinator creates __consumer_offsets on first use; do it now rather than in the first test.
  const deadline = Date.now() + 30000;
  for (;;) {
    try {
      await admin.describeGroups(['effectd.warmup']);
      break;
    } catch (e) {
      if (Date.now() > deadline) {
        console.error(`[kafka] WARNING: group coordinator not available yet: ${e.message}`);
        break;
      }
      await sleep(300);
    }
  }
} catch (e) {
  console.error(`[kafka] ensure-topics failed: ${e?.stack ?? e}`);
  failed = true;
} finally {
  await admin.disconnect().catch(() => {});
}
process.exit(failed ? 1 : 0);
