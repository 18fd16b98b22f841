import { describe, expect, it } from 'vitest';
import { requestDelta } from '../../packages/bench/src/throughput/broker-requests.js';

describe("the throughput bench's broker request counts", () => {
  it('counts what the clients sent between two samples: Fetch once (not its consumer/follower sub-counts), no controller traffic', () => {
    const before = { Produce: 10, Fetch: 4, FetchConsumer: 4, BrokerHeartbeat: 70, Metadata: 3 };
    const after = { Produce: 25, Fetch: 9, FetchConsumer: 9, BrokerHeartbeat: 75, Metadata: 3, OffsetCommit: 2 };
    expect(requestDelta(before, after)).toEqual({ total: 22, byApi: { Produce: 15, Fetch: 5, OffsetCommit: 2 } });
  });
});
