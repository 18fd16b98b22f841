// Wait until the local Kafka broker really serves requests (kafkajs admin listTopics + describeCluster).
//   EFFECTD_KAFKA_BROKERS          default 127.0.0.1:9092
//   EFFECTD_KAFKA_READY_TIMEOUT_S  default 90
//   EFFECTD_KAFKA_PID              optional: fail fast if this process dies while we wait
// Exit 0 when ready, 1 on timeout or when the broker process is gone.
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;
const brokers = (process.env.EFFECTD_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',').map((s) => s.trim()).filter(Boolean);
const timeoutMs = Number(process.env.EFFECTD_KAFKA_READY_TIMEOUT_S ?? 90) * 1000;
const pid = process.env.EFFECTD_KAFKA_PID ? Number(process.env.EFFECTD_KAFKA_PID) : undefined;

const alive = (p) => {
  try {
    process.kill(p, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const started = Date.now();
let lastError = 'no attempt';
let attempts = 0;
while (Date.now() - started < timeoutMs) {
  if (pid !== undefined && !alive(pid)) {
    console.error(`[kafka] broker process ${pid} exited while waiting for it (last error: ${lastError})`);
    process.exit(1);
  }
  attempts++;
  const kafka = new Kafka({
    clientId: 'effectd-wait-ready',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 5000,
    retry: { retries: 0 },
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    const topics = (await admin.listTopics()).filter((t) => !t.startsWith('__'));
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    console.log(
      `[kafka] ready after ${secs}s (${attempts} attempt(s)): cluster ${cluster.clusterId}, ` +
        `controller ${cluster.controller}, topics: ${topics.length ? topics.sort().join(', ') : '(none)'}`,
    );
    await admin.disconnect().catch(() => {});
    process.exit(0);
  } catch (e) {
    lastError = e?.message ?? String(e);
    await admin.disconnect().catch(() => {});
    await sleep(500);
  }
}
console.error(`[kafka] not ready after ${timeoutMs / 1000}s on ${brokers.join(',')} (last error: ${lastError})`);
process.exit(1);
