/** The process: read the configuration, build the app, listen, and close with grace on SIGTERM/SIGINT. */
import { buildApp, createLogger } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { PluginLoadError } from './tools/plugins.ts';
import { ToolDefinitionError } from './tools/registry.ts';

const GRACE_MS = 10_000;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`toolport: bad configuration: ${err.message}\n`);
    process.exit(1);
  }
  const log = createLogger(config);
  let app;
  try {
    app = await buildApp(config, { logger: log });
  } catch (err) {
    if (!(err instanceof ToolDefinitionError || err instanceof PluginLoadError || err instanceof ConfigError)) throw err;
    process.stderr.write(`toolport: ${err instanceof ConfigError ? 'bad configuration: ' : ''}${err.message}\n`);
    process.exit(1);
  }
  const { store, registry } = app.toolport;
  if (config.apiKeysFile === null) log.warn('no API_KEYS_FILE: every route is open to anyone who can reach this port');

  let closing = false;
  const close = (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'closing: finishing in-flight calls');
    const force = setTimeout(() => process.exit(1), GRACE_MS).unref();
    app.close().then(
      () => {
        clearTimeout(force);
        process.exit(0);
      },
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => close('SIGTERM'));
  process.on('SIGINT', () => close('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  log.info({ tools: registry.list().length, store: store.kind }, 'toolport is serving');
}

main().catch((err: unknown) => {
  process.stderr.write(`toolport: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
