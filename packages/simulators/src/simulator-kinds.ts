import { CloudSimulator, type CloudOptions } from './cloud.js';
import { EmailSimulator, type EmailOptions } from './email.js';
import type { IdSource } from './ids.js';
import { PaymentsSimulator, type PaymentsOptions } from './payments.js';
import type { SimProvider } from './sim-http.js';
import type { SimClock } from './sim-clock.js';
import { TravelSimulator, type TravelOptions } from './travel.js';
import { WeakToolsSimulator, type WeakToolsOptions } from './weak-tools.js';
import { CodedError } from './coded-error.js';

export interface SimulatorOptionsByKind {
  payments: PaymentsOptions;
  cloud: CloudOptions;
  email: EmailOptions;
  weak: WeakToolsOptions;
  travel: TravelOptions;
}

export type SimulatorKind = keyof SimulatorOptionsByKind;

export const SIMULATOR_KINDS: readonly SimulatorKind[] = ['payments', 'cloud', 'email', 'weak', 'travel'];

export function isSimulatorKind(value: string): value is SimulatorKind {
  return (SIMULATOR_KINDS as readonly string[]).includes(value);
}

export function createProvider<K extends SimulatorKind>(
  kind: K,
  clock: SimClock,
  ids: IdSource,
  options: SimulatorOptionsByKind[K] = {},
): SimProvider {
  switch (kind) {
    case 'payments':
      return new PaymentsSimulator(clock, ids, options as PaymentsOptions);
    case 'cloud':
      return new CloudSimulator(clock, ids, options as CloudOptions);
    case 'email':
      return new EmailSimulator(clock, ids, options as EmailOptions);
    case 'weak':
      return new WeakToolsSimulator(clock, ids, options as WeakToolsOptions);
    case 'travel':
      return new TravelSimulator(clock, ids, options as TravelOptions);
    default:
      throw new CodedError('internal', `Unknown simulator kind: ${String(kind)}`);
  }
}
