import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/effectd-harness.js';

/**
 * The README's commands run. Every fenced ```sh block preceded by a marker is run, in README order:
 *
 *   <!-- runnable -->                                        exit status 0
 *   <!-- runnable: expect TEXT -->                           … and TEXT on its output
 *   <!-- runnable: background; ready URL -->                 started and left running until URL answers 200;
 *                                                            stopped (SIGTERM to its process group) at the end
 *
 * The foreground blocks run one after another in ONE bash session, as a user types them into one
 * terminal (a variable set in one block is there in the next); a block's status is its last
 * command's. They run in a fresh directory that holds a symlink to each top-level entry of this
 * checkout (so `node bin/effectd.js` is this checkout's, and `./.effectd-dev` is the test's own).
 * The only change to the text is the port, so runs never collide with an effectd on 8080:
 * `127.0.0.1:8080` becomes a free port, `effectd dev`/`start` get `--port` with it, and the CLI
 * gets EFFECTD_URL for it. The text users copy is otherwise exactly what runs.
 */
interface Block { line: number; text: string; background: boolean; ready?: string; expect?: string }

const README = readFileSync('README.md', 'utf8');
const MARKER = /^<!-- runnable(?::\s*(.*?))?\s*-->$/;

function runnableBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = MARKER.exec(lines[i]!.trim());
    if (!marker) continue;
    const open = i + 1;
    if (lines[open] !== '```sh') throw new Error(`README.md:${i + 1}: a runnable marker must be followed directly by a \`\`\`sh block`);
    const close = lines.indexOf('```', open + 1);
    const block: Block = { line: open + 1, text: lines.slice(open + 1, close).join('\n'), background: false };
    for (const option of (marker[1] ?? '').split(';').map((o) => o.trim()).filter(Boolean)) {
      if (option === 'background') block.background = true;
      else if (option.startsWith('ready ')) block.ready = option.slice('ready '.length).trim();
      else if (option.startsWith('expect ')) block.expect = option.slice('expect '.length);
      else throw new Error(`README.md:${i + 1}: unknown runnable option "${option}" (background, ready URL, expect TEXT)`);
    }
    if (block.background && !block.ready) throw new Error(`README.md:${i + 1}: a background block needs "ready URL"`);
    blocks.push(block);
  }
  return blocks;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().once('error', fail).listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** The one substitution: the port. */
function onPort(text: string, port: number): string {
  return text
    .replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`)
    .replace(/^(node bin\/effectd\.js (?:dev|start))\b(.*)$/gm, `$1$2 --port ${port}`);
}

/** A directory that is this checkout for every command, with its own state files. */
function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'effectd-readme-'));
  for (const entry of readdirSync('.')) {
    if (entry.startsWith('.effectd') || entry === '.data' || entry === '.git' || entry === 'test-artifacts') continue;
    symlinkSync(resolve(entry), join(dir, entry));
  }
  return dir;
}

async function waitUntilReady(url: string, child: ChildProcess, output: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the background block exited (${child.exitCode ?? child.signalCode}) before ${url} answered:\n${output()}`);
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms:\n${output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One bash session; each block is sourced in it, its output kept apart. */
class Terminal {
  private readonly shell: ChildProcess;
  private readonly lines: AsyncIterator<string>;
  private count = 0;

  constructor(private readonly dir: string, env: Record<string, string>) {
    this.shell = spawn('bash', ['--norc', '--noprofile'], { cwd: dir, stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } });
    this.lines = createInterface({ input: this.shell.stdout! })[Symbol.asyncIterator]();
    this.shell.stdin!.write('set -o pipefail\n');
  }

  async run(text: string, timeoutMs = 90_000): Promise<{ status: number; output: string }> {
    const n = ++this.count;
    const script = join(this.dir, `.readme-block-${n}.sh`);
    const out = join(this.dir, `.readme-block-${n}.out`);
    writeFileSync(script, `${text}\n`);
    this.shell.stdin!.write(`source ${JSON.stringify(script)} > ${JSON.stringify(out)} 2>&1; echo "@@done ${n} $?"\n`);
    const timer = new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`block ${n} did not finish within ${timeoutMs} ms`)), timeoutMs).unref());
    for (;;) {
      const next = await Promise.race([this.lines.next(), timer]);
      if (next.done) throw new Error('the shell exited');
      const done = new RegExp(`^@@done ${n} (\\d+)$`).exec(next.value);
      if (done) return { status: Number(done[1]), output: readFileSync(out, 'utf8') };
    }
  }

  close(): void {
    this.shell.stdin!.end('exit\n');
  }
}

describe('README.md', () => {
  const blocks = runnableBlocks(README);
  const background: { child: ChildProcess; output: () => string }[] = [];
  let dir: string;
  let port: number;
  let terminal: Terminal;

  beforeAll(async () => {
    await ensureBuilt();
    dir = workspace();
    port = await freePort();
    terminal = new Terminal(dir, { EFFECTD_URL: `http://127.0.0.1:${port}`, NO_COLOR: '1' });
  }, 300_000);

  afterAll(async () => {
    terminal?.close();
    for (const { child } of background) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid!, 'SIGTERM');
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
  }, 60_000);

  it('keeps the two commands and the tour exactly as the project runs them', () => {
    expect(README).toContain('npm ci && npm run demo');
    expect(README).toContain('npm ci && npm test');
    const tour = blocks.map((b) => b.text).join('\n');
    expect(tour).toMatch(/^node bin\/effectd\.js dev$/m);
    expect(tour).toMatch(/^TOKEN=\$\(node bin\/effectd\.js token\)$/m);
    expect(tour).toMatch(/curl .*http:\/\/127\.0\.0\.1:8080\/v1\/effects/);
    expect(tour).toMatch(/http:\/\/127\.0\.0\.1:8080\/mcp/);
    expect(blocks.filter((b) => b.background)).toHaveLength(1);
    expect(blocks.filter((b) => b.expect).length).toBeGreaterThanOrEqual(4);
    expect(README.split('\n').length).toBeLessThanOrEqual(260);
  });

  it('runs every block marked runnable, in order: each exits 0 and prints what it promises', async () => {
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) {
      const text = onPort(block.text, port);
      const where = `README.md:${block.line}: ${block.text.split('\n')[0]}`;
      if (block.background) {
        const child = spawn('bash', ['-c', text], { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
        let output = '';
        child.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
        child.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
        background.push({ child, output: () => output });
        await waitUntilReady(onPort(block.ready!, port), child, () => output);
        continue;
      }
      const { status, output } = await terminal.run(text);
      expect(status, `${where}\n${output}`).toBe(0);
      if (block.expect) expect(output, where).toContain(block.expect);
    }
  }, 300_000);
});
