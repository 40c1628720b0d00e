/** One UpstreamClient (one connection pool per origin) for all the HTTP and OpenAPI tools of an app. */
import type { SourceContext } from '../types.ts';
import { UpstreamClient } from './client.ts';

const clients = new WeakMap<SourceContext, UpstreamClient>();

export function upstreamClient(context: SourceContext): UpstreamClient {
  let client = clients.get(context);
  if (client === undefined) {
    const made = new UpstreamClient();
    client = made;
    clients.set(context, made);
    context.onClose(() => made.close());
  }
  return client;
}
