import { createRequire } from 'node:module';
import { join } from 'node:path';
import { packageRoot } from '../../../../src/shared/package-root.js';

/**
 * Counts every request a kafkajs client of this process sends to the broker, by client id and API
 * (Produce, Fetch, OffsetCommit, Heartbeat, Metadata…), with what the requests carried: records
 * per produce request, fetch responses that came back empty, records fetched. Counts, not times:
 * they do not move with a busy machine. kafkajs is patched where every client sends
 * (ConnectionPool#send: one call per request on the wire; Broker#produce for its records), the
 * same module instance effectd and the SDK load (effectd's root node_modules).
 */
export interface ClientCounts {
  /** Requests by API name. */
  requests: Record<string, number>;
  /** Records carried by Produce requests. */
  producedRecords: number;
  /** Fetch responses without a single record. */
  emptyFetches: number;
  /** Records carried by Fetch responses. */
  fetchedRecords: number;
}

export type Counts = Record<string, ClientCounts>;

interface Pool {
  clientId: string;
  send(protocolRequest: { request: { apiName: string } }): Promise<unknown>;
}
interface BrokerLike {
  connectionPool: Pool;
  produce(request: { topicData: { partitions: { messages: unknown[] }[] }[] }): Promise<unknown>;
}

const counts: Counts = {};
const PATCHED = Symbol.for('effectd.bench.kafka-request-counter');

function of(clientId: string): ClientCounts {
  return (counts[clientId] ??= { requests: {}, producedRecords: 0, emptyFetches: 0, fetchedRecords: 0 });
}

/** Patches this process's kafkajs (idempotent). */
export function installKafkaRequestCounter(): void {
  const require = createRequire(join(packageRoot(), 'package.json'));
  const Pool = require('kafkajs/src/network/connectionPool.js') as { prototype: Pool & { [PATCHED]?: true } };
  const Broker = require('kafkajs/src/broker/index.js') as { prototype: BrokerLike };
  if (Pool.prototype[PATCHED]) return;
  Pool.prototype[PATCHED] = true;
  const send = Pool.prototype.send;
  Pool.prototype.send = async function (this: Pool, protocolRequest) {
    const client = of(this.clientId);
    const api = protocolRequest.request.apiName;
    client.requests[api] = (client.requests[api] ?? 0) + 1;
    const response = await send.call(this, protocolRequest);
    if (api === 'Fetch') {
      const records = ((response as { responses?: { partitions: { messages?: unknown[] }[] }[] }).responses ?? [])
        .reduce((n, topic) => n + topic.partitions.reduce((m, p) => m + (p.messages?.length ?? 0), 0), 0);
      client.fetchedRecords += records;
      if (records === 0) client.emptyFetches++;
    }
    return response;
  };
  const produce = Broker.prototype.produce;
  Broker.prototype.produce = function (this: BrokerLike, request) {
    of(this.connectionPool.clientId).producedRecords += request.topicData.reduce((n, t) => n + t.partitions.reduce((m, p) => m + p.messages.length, 0), 0);
    return produce.call(this, request);
  };
}

/** A copy of the counts so far. */
export function kafkaRequestCounts(): Counts {
  return structuredClone(counts);
}
