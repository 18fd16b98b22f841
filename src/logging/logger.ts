import { isatty } from 'node:tty';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';
import { logSettings, type LogLevel, type LogOptions } from './log-settings.js';
import { REDACTED_PATHS, REDACTION_CENSOR } from './redaction.js';

export type Logger = PinoLogger;

export interface LoggerOptions {
  /** 1: stdout (the service's own log); 2: stderr (an embedded runtime, stdio MCP, where stdout is someone else's). */
  fd: 1 | 2;
  /** The level when EFFECTD_LOG_LEVEL is unset. */
  defaultLevel?: LogLevel;
  /** The level and format the settings name (EFFECTD_LOG_LEVEL / EFFECTD_LOG_FORMAT: Settings.log), passed by the CLI; unset: the defaults. */
  log?: LogOptions;
  /** Writes JSON lines here instead of `fd` (tests). */
  stream?: DestinationStream;
}

/** A terminal line: the sentence, then the ids an operator looks for (the JSON record has every field). */
const PRETTY_LINE = '{msg}{if effectId}  · effect {effectId}{end}{if workflowId}  · workflow {workflowId}{end}{if tenant}  · tenant {tenant}{end}{if actor}  · by {actor}{end}';

/**
 * effectd's logger: JSON lines (`"level":"warn"`, ISO `time`) or pino-pretty's lines on a terminal,
 * written synchronously so the records of a drain are out before the process exits.
 */
export function createLogger(options: LoggerOptions): Logger {
  const settings = logSettings(options.log ?? {}, options.stream === undefined && isatty(options.fd), options.defaultLevel);
  const json = settings.format === 'json' || options.stream !== undefined;
  const destination = options.stream
    ?? (json
      ? pino.destination({ dest: options.fd, sync: true })
      : pretty({ destination: options.fd, sync: true, colorize: isatty(options.fd), translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', hideObject: true, messageFormat: PRETTY_LINE }));
  return pino({
    level: settings.level,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: REDACTION_CENSOR },
    // pino-pretty reads numeric levels; JSON readers get the label.
    ...(json ? { formatters: { level: (label: string) => ({ level: label }) } } : {}),
  }, destination);
}
