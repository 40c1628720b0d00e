#!/usr/bin/env node
// The `toolport` command (src/cli/main.ts). The package runs from its TypeScript sources with tsx
// registered in this process, so plugins written in TypeScript load too; one process, so signals
// reach the server that `toolport serve` starts.
import { readFileSync } from 'node:fs';
import { register } from 'tsx/esm/api';

register();
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2), version);
if (code >= 0) process.exitCode = code;
