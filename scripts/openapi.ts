/** The OpenAPI document as the code generates it: the built-in catalog, memory store, no plugins. */
import { buildApp } from '../src/app/index.ts';
import { loadConfig } from '../src/config.ts';

export const OPENAPI_PATH = new URL('../openapi/openapi.json', import.meta.url);

export async function renderOpenApi(): Promise<string> {
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }));
  try {
    await app.ready();
    return `${JSON.stringify(app.swagger(), null, 2)}\n`;
  } finally {
    await app.close();
  }
}
