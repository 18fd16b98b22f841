import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The files of the docs page: Swagger UI's, from the installed swagger-ui-dist (no CDN), and effectd's initializer. */
const TYPES = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
  'docs-initializer.js': 'text/javascript; charset=utf-8',
} as const;

export type DocsAssetName = keyof typeof TYPES;
export const DOCS_ASSET_NAMES = Object.keys(TYPES) as [DocsAssetName, ...DocsAssetName[]];

export function isDocsAsset(name: string): name is DocsAssetName {
  return Object.hasOwn(TYPES, name);
}

export interface DocsAsset {
  type: string;
  body: Buffer;
}

/** Swagger UI pointed at this instance's document; a file, not an inline script, so the page's CSP needs no 'unsafe-inline' for scripts. */
const INITIALIZER = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
  });
});
`;

export const DOCS_PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>effectd API</title>
    <link rel="stylesheet" type="text/css" href="/docs/swagger-ui.css">
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="/docs/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="/docs/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script src="/docs/docs-initializer.js" charset="UTF-8"></script>
  </body>
</html>
`;

/** Swagger UI renders with inline styles and data: images; scripts and fetches stay on this origin. */
export const DOCS_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Where swagger-ui-dist is installed (it has no `exports`, so its package.json resolves). */
export function swaggerUiDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/** Reads every asset once: a missing file fails the start, not the first visitor. */
export function loadDocsAssets(dir = swaggerUiDir()): ReadonlyMap<DocsAssetName, DocsAsset> {
  const assets = new Map<DocsAssetName, DocsAsset>();
  for (const [name, type] of Object.entries(TYPES) as [DocsAssetName, string][]) {
    const body = name === 'docs-initializer.js' ? Buffer.from(INITIALIZER) : readFileSync(join(dir, name));
    assets.set(name, { type, body });
  }
  return assets;
}
