import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { logSettings as resolveLog } from '../../src/logging/log-settings.js';
import { loadSettings } from '../../src/config/settings-loader.js';

/** A logger writing JSON lines into an array, as it writes them to stdout. */
function captured(env: Record<string, string> = {}) {
  const lines: string[] = [];
  const logger = createLogger({ fd: 1, log: loadSettings(env).log, stream: { write: (line: string) => void lines.push(line) } });
  return { logger, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('the logger', () => {
  it('blanks tokens, secrets, provider keys and auth headers whatever a call site passes (the second guard)', () => {
    const { logger, lines, records } = captured();
    const token = 'efd_agent_0123456789abcdefghijklmnop';
    const key = 'efd-8f14e45fceea167a5a36dedd4bea2543';
    logger.warn({
      token, secret: 'a'.repeat(64), providerKey: key, idempotencyKey: key, authorization: `Bearer ${token}`,
      headers: { authorization: `Bearer ${token}`, Authorization: `Bearer ${token}`, 'Idempotency-Key': key, 'idempotency-key': key },
      req: { headers: { authorization: `Bearer ${token}` } },
      attempt: { providerKey: key }, effectId: 'eff_1',
    }, 'something happened');
    const text = lines.join('');
    expect(text).not.toContain(token);
    expect(text).not.toContain(key);
    expect(text).not.toContain('a'.repeat(64));
    const [record] = records();
    expect(record).toMatchObject({ level: 'warn', msg: 'something happened', effectId: 'eff_1', token: '[redacted]', providerKey: '[redacted]', headers: { authorization: '[redacted]', 'Idempotency-Key': '[redacted]' }, req: { headers: { authorization: '[redacted]' } }, attempt: { providerKey: '[redacted]' } });
    expect(typeof record!.time).toBe('string');
  });

  it('writes JSON lines with level labels, at EFFECTD_LOG_LEVEL (info unless told)', () => {
    const quiet = captured({ EFFECTD_LOG_LEVEL: 'warn' });
    quiet.logger.info('not shown');
    quiet.logger.warn({ effectId: 'eff_2' }, 'shown');
    expect(quiet.records()).toEqual([expect.objectContaining({ level: 'warn', msg: 'shown', effectId: 'eff_2' })]);
    const normal = captured();
    normal.logger.debug('not shown');
    normal.logger.info('shown');
    expect(normal.records().map((r) => r.msg)).toEqual(['shown']);
  });

  it('reads EFFECTD_LOG_FORMAT and EFFECTD_LOG_LEVEL, and refuses a value it does not know with the ones it does', () => {
    const logSettings = (env: Record<string, string>, isTerminal: boolean, defaultLevel?: 'warn') => resolveLog(loadSettings(env).log, isTerminal, defaultLevel);
    expect(logSettings({}, true)).toEqual({ level: 'info', format: 'pretty' });
    expect(logSettings({}, false)).toEqual({ level: 'info', format: 'json' });
    expect(logSettings({ EFFECTD_LOG_FORMAT: 'json' }, true).format).toBe('json');
    expect(logSettings({ EFFECTD_LOG_FORMAT: 'pretty' }, false).format).toBe('pretty');
    expect(logSettings({}, false, 'warn').level).toBe('warn');
    expect(() => logSettings({ EFFECTD_LOG_LEVEL: 'verbose' }, false)).toThrow(/EFFECTD_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, not "verbose"/);
    expect(() => logSettings({ EFFECTD_LOG_FORMAT: 'xml' }, false)).toThrow(/EFFECTD_LOG_FORMAT must be json or pretty .*, not "xml"/);
  });
});
