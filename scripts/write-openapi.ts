/** npm run openapi: rewrite the committed openapi/openapi.json from the code. */
import { mkdir, writeFile } from 'node:fs/promises';
import { OPENAPI_PATH, renderOpenApi } from './openapi.ts';

await mkdir(new URL('.', OPENAPI_PATH), { recursive: true });
await writeFile(OPENAPI_PATH, await renderOpenApi());
process.stdout.write(`wrote ${OPENAPI_PATH.pathname}\n`);
