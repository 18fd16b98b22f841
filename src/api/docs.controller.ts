import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Controller, Get, Header, Param, StreamableFile } from '@nestjs/common';
import { EffectdError } from '../core/errors.js';
import { packageRoot } from '../shared/package-root.js';
import { DOCS_CSP, DOCS_PAGE, isDocsAsset, loadDocsAssets } from './openapi/docs-assets.js';
import { openApiDocument, type OpenApiDocument } from './openapi/document.js';

/**
 * The API describing itself: the OpenAPI document, built once at start, and a docs page from the
 * packaged Swagger UI. Files are answered as StreamableFile, so any Nest HTTP adapter serves them.
 */
@Controller()
export class DocsController {
  private readonly document: OpenApiDocument = openApiDocument(packageVersion());
  private readonly assets = loadDocsAssets();

  @Get('openapi.json')
  @Header('Cache-Control', 'no-cache')
  openapi(): OpenApiDocument {
    return this.document;
  }

  @Get('docs')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', DOCS_CSP)
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Referrer-Policy', 'no-referrer')
  @Header('Cache-Control', 'no-cache')
  page(): string {
    return DOCS_PAGE;
  }

  @Get('docs/:asset')
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Cache-Control', 'public, max-age=3600')
  asset(@Param('asset') name: string): StreamableFile {
    const asset = isDocsAsset(name) ? this.assets.get(name) : undefined;
    if (!asset) throw new EffectdError('not_found', `no docs file ${name}: the page is at /docs`, { asset: name });
    return new StreamableFile(asset.body, { type: asset.type, length: asset.body.length });
  }
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
