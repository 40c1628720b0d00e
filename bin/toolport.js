#!/usr/bin/env node
// `npx toolport`: starts the service (configured by the environment: PORT, TOOLS_FILE,
// TOOL_PLUGINS…) from this package's TypeScript sources, with tsx registered in this process
// so that plugins written in TypeScript load too. One process: signals reach the server.
import { register } from 'tsx/esm/api';

register();
await import('../src/server.ts');
