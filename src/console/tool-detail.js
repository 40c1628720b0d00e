// A tool's detail: its description, hash, versions, schemas and examples, and a form built from
// its schema that runs the call in a chosen provider format and shows the answer.
import { problemText, request } from './api.js';
import { callBody, curlCommand, FORMATS } from './call-shapes.js';
import { clockTime, duration, h, jsonBlock, jsonText, notice, outcomeBadge, textBlock, uid } from './dom.js';
import { schemaForm } from './schema-form.js';
import { stateBadge } from './source-health.js';

/**
 * @param {any} tool the definition (GET /tools)
 * @param {any} context the console's shared context
 * @param {import('./source-health.js').SourceRow | null} [source] where the tool comes from, with its health
 */
export function toolDetail(tool, context, source = null) {
  const versions = h('ol', { class: 'versions' }, h('li', { class: 'muted' }, 'loading…'));
  void request(`/tools/${encodeURIComponent(tool.name)}/versions`).then((answer) => {
    const rows = answer.ok ? answer.data.versions : [];
    versions.replaceChildren(
      ...(rows.length === 0
        ? [h('li', { class: 'muted' }, answer.ok ? 'none recorded' : problemText(answer))]
        : rows.map((v) =>
            h(
              'li',
              {},
              h('code', {}, v.hash.slice(0, 16)),
              ' ',
              h('span', { class: 'muted' }, `first served ${new Date(v.first_served_at).toLocaleString()}${v.pending ? ' · pending review' : ''}`),
            ),
          )),
    );
  });
  const facts = [
    source ? ['Source', sourceFact(source)] : null,
    ['Hash', h('code', { class: 'hash' }, tool.hash)],
    tool.annotations
      ? [
          'Annotations',
          Object.entries(tool.annotations)
            .map(([k, v]) => `${k}: ${v}`)
            .join(', '),
        ]
      : null,
    tool.idempotency
      ? [
          'Idempotency',
          `${tool.idempotency.strategy}, scope ${tool.idempotency.scope ?? 'session'}${tool.idempotency.ttl_s ? `, ${tool.idempotency.ttl_s} s` : ''}`,
        ]
      : null,
    tool.timeout_ms ? ['Time limit', `${tool.timeout_ms} ms`] : null,
  ].filter(Boolean);
  const tryIt = tryForm(tool, context);
  return [
    h('header', { class: 'tool-head' }, h('h2', {}, tool.name), h('p', {}, tool.description)),
    h(
      'dl',
      { class: 'facts' },
      facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    ),
    h('details', {}, h('summary', {}, 'Versions'), versions),
    h(
      'details',
      {},
      h('summary', {}, 'JSON Schema of the arguments'),
      jsonBlock(tool.parameters, `${tool.name} arguments schema`),
      tool.result ? [h('p', {}, 'Result schema'), jsonBlock(tool.result, `${tool.name} result schema`)] : null,
    ),
    (tool.examples ?? []).length > 0
      ? h(
          'section',
          { class: 'examples', 'aria-label': 'Examples' },
          h('h3', {}, 'Examples'),
          h(
            'ul',
            {},
            tool.examples.map((example, i) =>
              h(
                'li',
                {},
                h('p', {}, example.description),
                h('button', { type: 'button', class: 'small', onclick: () => tryIt.fill(example.input) }, `Use example ${i + 1}`),
                h('details', {}, h('summary', {}, 'Input and output'), jsonBlock(example.input, 'example input'), jsonBlock(example.output, 'example output')),
              ),
            ),
          ),
        )
      : null,
    tryIt.element,
  ];
}

/** @param {import('./source-health.js').SourceRow} source */
function sourceFact(source) {
  const upstream = source.kind === 'openapi' || source.kind === 'mcp' || source.kind === 'http';
  const error = source.last_error && source.state !== 'up' ? ` · last error: ${source.last_error.code} — ${source.last_error.detail}` : '';
  return h('span', { class: 'tool-source' }, source.name, upstream ? [' ', stateBadge(source.state), error] : null);
}

function tryForm(tool, context) {
  const form = schemaForm(tool.parameters);
  const formatId = uid('format');
  const sessionId = uid('session');
  const jsonId = uid('json');
  const format = h(
    'select',
    { id: formatId, name: 'format' },
    FORMATS.map((f) => h('option', { value: f.name }, f.label)),
  );
  const session = h('input', {
    id: sessionId,
    name: 'session',
    type: 'text',
    autocomplete: 'off',
    pattern: '[A-Za-z0-9._:\\-]{1,128}',
    placeholder: 'optional',
  });
  const asJson = h('input', { id: jsonId, type: 'checkbox' });
  const jsonArea = h('textarea', { class: 'mono', rows: 8, spellcheck: 'false', 'aria-label': 'Arguments as JSON', hidden: true });
  const errors = h('div', { role: 'alert', class: 'error' });
  const run = h('button', { type: 'submit', class: 'primary' }, 'Run');
  const output = h('div', { class: 'answer', 'aria-live': 'polite' });

  asJson.addEventListener('change', () => {
    if (asJson.checked) jsonArea.value = jsonText(form.read().value ?? {});
    else {
      try {
        form.fill(JSON.parse(jsonArea.value || '{}'));
      } catch {
        asJson.checked = true;
        errors.textContent = 'The JSON is not valid: fix it before going back to the form.';
        return;
      }
    }
    errors.textContent = '';
    form.element.hidden = asJson.checked;
    jsonArea.hidden = !asJson.checked;
  });

  const element = h(
    'form',
    { class: 'try', 'aria-label': `Try ${tool.name}`, novalidate: true },
    h('h3', {}, 'Try it'),
    form.element,
    h('div', { class: 'field inline' }, asJson, h('label', { for: jsonId }, 'Edit the arguments as JSON')),
    jsonArea,
    h(
      'div',
      { class: 'row' },
      h('div', { class: 'field' }, h('label', { for: formatId }, 'Provider format'), format),
      h('div', { class: 'field' }, h('label', { for: sessionId }, 'Session id (X-Session-Id)'), session),
    ),
    errors,
    h('div', {}, run),
    output,
  );

  element.addEventListener('submit', async (event) => {
    event.preventDefault();
    let args;
    if (asJson.checked) {
      try {
        args = JSON.parse(jsonArea.value || '{}');
      } catch (err) {
        errors.textContent = `The arguments are not valid JSON: ${err.message}`;
        return;
      }
    } else {
      const got = form.read();
      if (got.errors.length > 0) {
        errors.textContent = got.errors.join('; ');
        return;
      }
      args = got.value;
    }
    errors.textContent = '';
    const id = `console_${Math.random().toString(36).slice(2, 10)}`;
    const body = callBody(format.value, tool.name, args, id);
    const path = `/tools/invoke?format=${format.value}`;
    const headers = session.value.trim() ? { 'x-session-id': session.value.trim() } : {};
    run.disabled = true;
    output.replaceChildren(notice('Running…'));
    const answer = await request(path, { method: 'POST', body, headers });
    run.disabled = false;
    const curl = curlCommand({ url: `${location.origin}${path}`, body, sessionId: session.value.trim(), keyed: context.caller.keys_required });
    output.replaceChildren(...renderAnswer(answer, curl));
  });
  return { element, fill: (value) => (asJson.checked ? (jsonArea.value = jsonText(value)) : form.fill(value)) };
}

function renderAnswer(answer, curl) {
  const copy = h('button', { type: 'button', class: 'small' }, 'Copy curl');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(curl);
      copy.textContent = 'Copied';
    } catch {
      copy.textContent = 'Select the text to copy';
    }
    setTimeout(() => (copy.textContent = 'Copy curl'), 2000);
  });
  const curlPart = h(
    'section',
    { class: 'panel', 'aria-label': 'Equivalent curl' },
    h('div', { class: 'panel-head' }, h('h4', {}, 'curl'), copy),
    textBlock(curl, 'equivalent curl command'),
  );
  if (!answer.ok)
    return [h('p', { class: 'error', role: 'alert' }, `HTTP ${answer.status} — ${problemText(answer)}`), jsonBlock(answer.data, 'problem details'), curlPart];
  const result = answer.data;
  return [
    h(
      'p',
      { class: 'summary', id: 'answer-summary' },
      outcomeBadge(result.error?.code ?? 'success'),
      ' ',
      result.replayed ? h('span', { class: 'badge' }, 'replayed') : null,
      ' ',
      h('span', { class: 'muted' }, `${duration(result.duration_ms)} · ${clockTime(new Date().toISOString())}`),
    ),
    h(
      'section',
      { class: 'panel', 'aria-label': 'Result' },
      h('h4', {}, 'Result'),
      h('p', { class: 'message' }, result.message),
      jsonBlock(result.value, 'result value'),
    ),
    h('section', { class: 'panel', 'aria-label': 'Content' }, h('h4', {}, 'content'), textBlock(result.content, 'content for the model')),
    h('section', { class: 'panel', 'aria-label': 'Tool message' }, h('h4', {}, 'tool_message'), jsonBlock(result.tool_message, 'tool message')),
    curlPart,
    h('details', {}, h('summary', {}, 'The whole answer'), jsonBlock(result, 'whole answer')),
  ];
}
