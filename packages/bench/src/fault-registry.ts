import { FAULT_SPECS, type FaultSpec } from './faults.js';
import { LIMBO_FAULT_SPECS } from './limbo/limbo-faults.js';
import { isFault, type FaultName } from './names.js';

/** A cell's fault, the design's (faults.ts) or one of LIMBO's fault modes (limbo/limbo-faults.ts). */
export function faultSpec(name: FaultName): FaultSpec {
  return isFault(name) ? FAULT_SPECS[name] : LIMBO_FAULT_SPECS[name];
}
