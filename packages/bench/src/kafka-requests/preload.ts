/**
 * `node --import <this file>` for an effectd process under the Kafka request count
 * (kafka-requests.ts): counts its kafkajs requests and writes them with the time, as JSON, to the
 * file named by KAFKA_REQUEST_COUNTS_FILE every 20 ms and when the process exits (the reader
 * waits for a write after the moment it wants).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { installKafkaRequestCounter, kafkaRequestCounts } from './counter.js';

const file = process.env.KAFKA_REQUEST_COUNTS_FILE;
if (file) {
  installKafkaRequestCounter();
  const write = () => {
    writeFileSync(`${file}.tmp`, JSON.stringify({ at: Date.now(), counts: kafkaRequestCounts() }));
    renameSync(`${file}.tmp`, file);
  };
  setInterval(write, 20).unref();
  process.on('exit', write);
}
