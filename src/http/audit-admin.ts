/**
 * Every admin action in the audit log (docs/audit.md): a request to a route marked `config.admin`
 * that changes something (not GET or HEAD) appends one entry when it is answered — who, which route,
 * and its status. The hook is put on those routes alone, so other requests pay nothing for it.
 * Registered only when the audit log is on, before the routes.
 */
import type { FastifyInstance, onResponseHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { AuditSink } from '../store/audit.ts';

const READS = new Set(['GET', 'HEAD']);

export const auditAdmin = fp(
  async (app: FastifyInstance, { audit }: { audit: AuditSink }) => {
    const record: onResponseHookHandler = (request, reply, done) => {
      if (READS.has(request.method)) return done(); // a route that also reads
      const caller = request.caller;
      audit.record({
        kind: 'admin',
        caller: caller?.id ?? null,
        user: caller?.principal.user ?? null,
        outcome: String(reply.statusCode),
        requestId: request.id,
        detail: `${request.method} ${request.url.split('?')[0]}`,
      });
      done();
    };
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if ((route.config as { admin?: boolean } | undefined)?.admin !== true || methods.every((method) => READS.has(method))) return;
      const own = route.onResponse;
      route.onResponse = own === undefined ? [record] : [...(Array.isArray(own) ? own : [own]), record];
    });
  },
  { name: 'toolport-audit-admin' },
);
