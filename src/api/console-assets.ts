import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Response, type Router } from 'express';
import { packageRoot } from '../providers/config-loader.js';

/** The console's static files ship with the package (outside src/, so vitest and dist/ find the same ones). */
export function consoleDir(): string {
  return join(packageRoot(), 'console');
}

// The page loads only its own scripts and styles and talks only to this origin.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function secure(res: Response): void {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-cache');
}

/** The operator console: `/` is the page, `/console/*` its scripts and styles. No build step at run time. */
export function consoleRouter(dir = consoleDir()): Router {
  if (!existsSync(join(dir, 'index.html'))) throw new Error(`effectd: the operator console is missing (${dir}/index.html)`);
  const router = express.Router();
  router.get(['/', '/index.html'], (_req, res) => {
    secure(res);
    res.sendFile(join(dir, 'index.html'));
  });
  router.use('/console', express.static(dir, { index: false, setHeaders: secure }));
  return router;
}
