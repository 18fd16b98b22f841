// @effectd/simulators: stand-ins for third-party providers (payments, email, cloud, weak, travel),
// each an HTTP server that keeps the effects that really happened queryable (/_oracle/state).
// In-process (startSimulator) or as its own process (spawnSimulator, or the effectd-simulator bin).
export { startSimulator, type RunningSimulator, type SimulatorKind, type SimulatorOptionsByKind, type StartOptions } from './server.js';
export { simulatorCall, simulatorEntry, spawnSimulator, type SimulatorProcess } from './process.js';
export { SIMULATOR_KINDS, isSimulatorKind } from './simulator-kinds.js';
export type { FaultAction, FaultRule } from './faults.js';
export type { RequestLogEntry, RequestStatus } from './request-log.js';
