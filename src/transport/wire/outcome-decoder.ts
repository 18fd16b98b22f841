import { fromJsonString } from '@bufbuild/protobuf';
import { EffectOutcomeSchema, type EffectOutcome } from './effectd/v1/effectd_pb.js';

// Its own module (the wire schema and nothing else) so the agent SDK ships it without the server's graph.
export function decodeOutcome(text: string): EffectOutcome {
  // Newer effectd versions may add fields: an older client must still read the answer.
  return fromJsonString(EffectOutcomeSchema, text, { ignoreUnknownFields: true });
}
