import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { Controller, Get, Header, NotFoundException, Param, StreamableFile } from '@nestjs/common';
import { packageRoot } from '../shared/package-root.js';
import { EffectdError } from '../core/errors.js';

/** The console's static files ship with the package (outside src/, so vitest and dist/ find the same ones). */
export function consoleDir(): string {
  return join(packageRoot(), 'console');
}

// The page loads only its own scripts and styles and talks only to this origin.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json; charset=utf-8',
};

/**
 * The operator console: `/` is the page, `/console/<file>` its scripts and styles. No build step
 * at run time. A Nest controller (files answered as StreamableFile), so any Nest HTTP adapter
 * serves it. Only the files the console directory held at start are served, read at each request
 * (an edit shows on reload); any other name, `..` included, is 404.
 */
export function consoleController(dir = consoleDir()) {
  if (!existsSync(join(dir, 'index.html'))) throw new EffectdError('internal', `effectd: the operator console is missing (${dir}/index.html)`);
  const files = new Set(readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isFile() && !entry.name.startsWith('.')).map((entry) => entry.name));
  const send = async (name: string) => {
    const body = await readFile(join(dir, name)).catch(() => {
      throw new NotFoundException(`Cannot GET /console/${name}`);
    });
    return new StreamableFile(body, { type: TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream', length: body.length });
  };

  @Controller()
  class ConsoleController {
    @Get(['', 'index.html'])
    @Header('Content-Security-Policy', CSP)
    @Header('X-Content-Type-Options', 'nosniff')
    @Header('Referrer-Policy', 'no-referrer')
    @Header('Cache-Control', 'no-cache')
    page(): Promise<StreamableFile> {
      return send('index.html');
    }

    @Get('console/:file')
    @Header('Content-Security-Policy', CSP)
    @Header('X-Content-Type-Options', 'nosniff')
    @Header('Referrer-Policy', 'no-referrer')
    @Header('Cache-Control', 'no-cache')
    asset(@Param('file') file: string): Promise<StreamableFile> {
      if (!files.has(file)) throw new NotFoundException(`Cannot GET /console/${file}`);
      return send(file);
    }
  }
  return ConsoleController;
}
