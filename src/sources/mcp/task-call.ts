/**
 * A tools/call of a tool that requires tasks (MCP 2025-11-25, `execution.taskSupport: "required"`,
 * on a server that declares `tasks.requests.tools.call`): toolport asks for a task and follows it to
 * its end inside the forwarded call, with the SDK Client's own task stream (tasks/get until the task
 * ends or needs input, then tasks/result, on which the server delivers its queued questions). The
 * task is the server's; the caller sees toolport's call, or toolport's own task when it asked for
 * one. A call that ends first (deadline, cancellation, a question answered by calling again) sends
 * `tasks/cancel` for it.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, type CallToolRequest } from '@modelcontextprotocol/sdk/types.js';
import { ANY_RESULT } from './call-result.ts';
import type { UpstreamRelay } from './relay.ts';

/** How long the server keeps the task after it ends (ms): only as long as the call can still read it. */
const TASK_TTL_MS = 60_000;

export async function callToolAsTask(
  client: Client,
  params: CallToolRequest['params'],
  relay: UpstreamRelay,
  options: { signal: AbortSignal; timeout: number },
): Promise<Record<string, unknown>> {
  const token = String(params._meta?.progressToken);
  let taskId: string | null = null;
  try {
    const stream = client.experimental.tasks.callToolStream(params, ANY_RESULT, { ...options, task: { ttl: options.timeout + TASK_TTL_MS } });
    for await (const message of stream) {
      if (message.type === 'taskCreated') relay.follow((taskId = message.task.taskId), token);
      else if (message.type === 'result') return message.result;
      else if (message.type === 'error') throw message.error;
    }
    throw new McpError(ErrorCode.InternalError, "the server's task ended without a result");
  } finally {
    if (taskId !== null) {
      relay.unfollow(taskId);
      if (options.signal.aborted) client.experimental.tasks.cancelTask(taskId).catch(() => {}); // the server may have ended it already
    }
  }
}
