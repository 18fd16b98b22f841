import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll } from 'vitest';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { ensureBuilt, startPayments, tempDir, writeToolsConfig } from './effectd-harness.js';

export interface StdioMcpSuite {
  payments: RunningSimulator;
  client: Client;
}

/**
 * For a describe block: the payments simulator, and the official client SDK over stdio spawning
 * `effectd mcp` on it (the desktop snippet's way), with `args` after the data dir and config.
 * The charge's contract is overridden with `charge` (a settle window of 5 s unless it says otherwise).
 */
export function stdioMcpSuite(clientName: string, args: string[] = [], charge: Record<string, unknown> = {}): StdioMcpSuite {
  const suite = {} as StdioMcpSuite;
  beforeAll(async () => {
    await ensureBuilt();
    suite.payments = await startPayments();
    const dataDir = tempDir();
    const config = writeToolsConfig(dataDir, { payments: suite.payments.url }, { 'payments.charge': { settleWindowMs: 5_000, ...charge } });
    suite.client = new Client({ name: clientName, version: '1.0.0' });
    await suite.client.connect(new StdioClientTransport({ command: process.execPath, args: ['bin/effectd.js', 'mcp', '--data-dir', dataDir, '--config', config, ...args], env: { ...process.env } as Record<string, string>, stderr: 'ignore' }));
  }, 60_000);
  afterAll(async () => {
    await suite.client?.close();
    await suite.payments?.close();
  });
  return suite;
}
