import { EffectdError } from '../core/errors.js';
/** Levels a user may name in EFFECTD_LOG_LEVEL, most severe first; `silent` turns logging off. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = 'json' | 'pretty';

export interface LogSettings {
  level: LogLevel;
  format: LogFormat;
}

/**
 * EFFECTD_LOG_LEVEL (default `defaultLevel`) and EFFECTD_LOG_FORMAT (`json` or `pretty`; unset:
 * pretty on a terminal, JSON lines otherwise). Read before serving, so a typo fails the start.
 */
export function logSettings(env: NodeJS.ProcessEnv, isTerminal: boolean, defaultLevel: LogLevel = 'info'): LogSettings {
  const level = env.EFFECTD_LOG_LEVEL || defaultLevel;
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new EffectdError('invalid_config', `EFFECTD_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not "${level}"`);
  const format = env.EFFECTD_LOG_FORMAT || (isTerminal ? 'pretty' : 'json');
  if (format !== 'json' && format !== 'pretty') throw new EffectdError('invalid_config', `EFFECTD_LOG_FORMAT must be json or pretty, not "${format}" (unset: pretty on a terminal, JSON lines otherwise)`);
  return { level: level as LogLevel, format };
}
