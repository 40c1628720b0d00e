/**
 * Where a result's content is made: once, as its answer is formatted. The pipeline carries the text
 * as data (tools/render.ts ResultText); only here is it cut at the tool's own limit, else MAX_CONTENT_CHARS.
 */
import { RESULT_TEXT, type AnsweredResult, type InvocationResult } from '../tools/outcome.ts';
import { contentOf } from '../tools/render.ts';

/** The result with its `content` rendered (in place: a result belongs to the one answer that carries it). */
export function answered(result: InvocationResult, maxContentChars: number): AnsweredResult {
  result.content = contentOf(result[RESULT_TEXT], maxContentChars, result.result_ref ?? null);
  return result as AnsweredResult;
}
