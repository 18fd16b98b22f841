// Makes ts-api-utils load this workspace's typescript 6 instead of the root's typescript 7.
//
// npm nests typescript-eslint here because its peer range (<6.1) excludes the root's typescript 7,
// but ts-api-utils (a dependency of typescript-eslint) declares the open peer range `>=4.8.4`, so npm
// hoists it to the root node_modules, where `require('typescript')` finds typescript 7, which has no
// JavaScript compiler API (it exports only its version). Neither npm overrides nor a direct
// dependency here keep ts-api-utils nested, so its one `require('typescript')` is pointed at the
// typescript this package depends on. Nothing else is redirected; imported before the plugins.
import Module, { createRequire } from 'node:module';
import { sep } from 'node:path';

const typescript6 = createRequire(import.meta.url).resolve('typescript');
const TS_API_UTILS = `${sep}node_modules${sep}ts-api-utils${sep}`;
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === 'typescript' && parent?.filename?.includes(TS_API_UTILS)) return typescript6;
  return resolveFilename.call(this, request, parent, ...rest);
};
