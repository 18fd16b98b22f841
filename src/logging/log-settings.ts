/** The levels a log may be set to, most severe first; `silent` turns logging off (the settings schema offers exactly these). */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type LogFormat = 'json' | 'pretty';

/** What the settings say (EFFECTD_LOG_LEVEL, EFFECTD_LOG_FORMAT, checked by the settings loader); unset: the caller's defaults. */
export interface LogOptions {
  level?: LogLevel | undefined;
  format?: LogFormat | undefined;
}

export interface LogSettings {
  level: LogLevel;
  format: LogFormat;
}

/** The level (default `defaultLevel`) and the format (unset: pretty on a terminal, JSON lines otherwise). */
export function logSettings(given: LogOptions, isTerminal: boolean, defaultLevel: LogLevel = 'info'): LogSettings {
  return { level: given.level ?? defaultLevel, format: given.format ?? (isTerminal ? 'pretty' : 'json') };
}
