// The linter's TypeScript-aware plugins, resolved from this workspace so they load typescript 6
// (tools/lint/node_modules/typescript) rather than the root's typescript 7, which has no JavaScript
// compiler API. See package.json here for why; typescript-6.mjs must be imported first.
import './typescript-6.mjs';

export { default as tseslint } from 'typescript-eslint';
export { importX, createNodeResolver } from 'eslint-plugin-import-x';
