// A form built from a tool's JSON Schema: objects (nested), arrays, enums, required fields, strings,
// numbers, integers and booleans. Anything the form cannot express (oneOf, $ref, free objects) is a
// JSON text area. Every field has read() → {present, value, errors} and fill(value).
import { h, uid } from './dom.js';

/** The kind of field a schema needs. */
function kindOf(schema) {
  if (!schema || typeof schema !== 'object') return 'json';
  if (Array.isArray(schema.enum)) return 'enum';
  if (schema.const !== undefined) return 'const';
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? 'null';
  if (type === undefined && schema.properties) type = 'object';
  if (type === undefined && schema.items) type = 'array';
  if (type === 'object' && !schema.properties) return 'json';
  if (type === 'array' && (!schema.items || Array.isArray(schema.items))) return 'json';
  return ['string', 'number', 'integer', 'boolean', 'object', 'array'].includes(type) ? type : 'json';
}

/** What the schema asks beyond its type, in a few words: the field's hint. */
function constraints(schema) {
  const parts = [];
  if (schema.minLength !== undefined) parts.push(`at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  if (schema.minimum !== undefined) parts.push(`≥ ${schema.minimum}`);
  if (schema.maximum !== undefined) parts.push(`≤ ${schema.maximum}`);
  if (schema.exclusiveMinimum !== undefined) parts.push(`> ${schema.exclusiveMinimum}`);
  if (schema.exclusiveMaximum !== undefined) parts.push(`< ${schema.exclusiveMaximum}`);
  if (schema.pattern !== undefined) parts.push(`pattern ${schema.pattern}`);
  if (schema.format !== undefined) parts.push(`format ${schema.format}`);
  if (schema.minItems !== undefined) parts.push(`at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined) parts.push(`at most ${schema.maxItems} items`);
  return parts;
}

function hintFor(schema, kind) {
  const type = kind === 'json' ? 'JSON' : kind === 'enum' ? 'one of the listed values' : kind;
  const text = [schema.description, [type, ...constraints(schema)].join(', ')].filter(Boolean).join(' — ');
  const id = uid('hint');
  return { id, element: h('p', { class: 'hint', id }, text) };
}

function labelText(name, required) {
  return [
    name,
    required ? h('span', { class: 'required', title: 'required' }, ' *') : null,
    required ? h('span', { class: 'visually-hidden' }, ' (required)') : null,
  ];
}

const absent = () => ({ present: false, value: undefined, errors: [] });

/** A field for `schema`, labelled `name`, at `path` (for error messages). */
export function field(schema, name, { required = false, path = name } = {}) {
  const kind = kindOf(schema);
  if (kind === 'object') return objectField(schema, name, { required, path });
  if (kind === 'array') return arrayField(schema, name, { required, path });
  return leafField(schema, kind, name, { required, path });
}

function leafField(schema, kind, name, { required, path }) {
  const id = uid('field');
  const hint = hintFor(schema, kind);
  const common = { id, name: path, 'aria-describedby': hint.id, required, 'aria-required': required ? 'true' : null };
  let control;
  let read;
  let fill;
  if (kind === 'enum' || (kind === 'boolean' && !required)) {
    const values = kind === 'enum' ? schema.enum : [true, false];
    control = h(
      'select',
      common,
      required ? null : h('option', { value: '' }, '(not set)'),
      values.map((v, i) => h('option', { value: String(i) }, typeof v === 'string' ? v : JSON.stringify(v))),
    );
    read = () => (control.value === '' ? absent() : { present: true, value: values[Number(control.value)], errors: [] });
    fill = (value) => {
      const index = values.findIndex((v) => JSON.stringify(v) === JSON.stringify(value));
      control.value = index === -1 ? (required ? '0' : '') : String(index);
    };
  } else if (kind === 'boolean') {
    control = h('input', { ...common, type: 'checkbox', required: false });
    read = () => ({ present: true, value: control.checked, errors: [] });
    fill = (value) => (control.checked = value === true);
  } else if (kind === 'const') {
    control = h('input', { ...common, type: 'text', readonly: true, value: JSON.stringify(schema.const) });
    read = () => ({ present: required, value: schema.const, errors: [] });
    fill = () => {};
  } else if (kind === 'number' || kind === 'integer') {
    control = h('input', {
      ...common,
      type: 'number',
      inputmode: kind === 'integer' ? 'numeric' : 'decimal',
      step: kind === 'integer' ? '1' : 'any',
      min: schema.minimum,
      max: schema.maximum,
    });
    read = () => {
      const text = control.value.trim();
      if (text === '') return required ? { present: false, value: undefined, errors: [`${path}: required`] } : absent();
      const value = Number(text);
      if (!Number.isFinite(value)) return { present: false, value: undefined, errors: [`${path}: not a number`] };
      return { present: true, value, errors: [] };
    };
    fill = (value) => (control.value = typeof value === 'number' ? String(value) : '');
  } else if (kind === 'string') {
    const long = (schema.maxLength ?? 0) > 200 || /content|text|body|prompt|markdown/i.test(name);
    control = long ? h('textarea', { ...common, rows: 4 }) : h('input', { ...common, type: 'text', maxlength: schema.maxLength });
    read = () => (control.value === '' && !required ? absent() : { present: true, value: control.value, errors: [] });
    fill = (value) => (control.value = typeof value === 'string' ? value : '');
  } else {
    control = h('textarea', { ...common, rows: 3, class: 'mono', spellcheck: 'false' });
    read = () => {
      const text = control.value.trim();
      if (text === '') return required ? { present: false, value: undefined, errors: [`${path}: required`] } : absent();
      try {
        return { present: true, value: JSON.parse(text), errors: [] };
      } catch {
        return { present: false, value: undefined, errors: [`${path}: not valid JSON`] };
      }
    };
    fill = (value) => (control.value = value === undefined ? '' : JSON.stringify(value, null, 2));
  }
  if (schema.default !== undefined) fill(schema.default);
  const element = h(
    'div',
    { class: kind === 'boolean' && required ? 'field inline' : 'field' },
    h('label', { for: id }, labelText(name, required)),
    control,
    hint.element,
  );
  return { element, read, fill, focus: () => control.focus() };
}

function objectField(schema, name, { required, path, root = false }) {
  const requiredNames = new Set(schema.required ?? []);
  const children = Object.entries(schema.properties ?? {}).map(([key, child]) => [
    key,
    field(child, key, { required: requiredNames.has(key), path: root ? key : `${path}.${key}` }),
  ]);
  const body = children.map(([, child]) => child.element);
  const element = root
    ? h('div', { class: 'fields' }, body.length === 0 ? h('p', { class: 'muted' }, 'This tool takes no arguments.') : body)
    : h(
        'fieldset',
        { class: 'fields' },
        h('legend', {}, labelText(name, required)),
        schema.description ? h('p', { class: 'hint' }, schema.description) : null,
        body,
      );
  const read = () => {
    const value = {};
    const errors = [];
    for (const [key, child] of children) {
      const got = child.read();
      errors.push(...got.errors);
      if (got.present) value[key] = got.value;
    }
    const present = root || required || Object.keys(value).length > 0;
    return { present, value: present ? value : undefined, errors };
  };
  const fill = (value) => {
    for (const [key, child] of children) child.fill(value && typeof value === 'object' ? value[key] : undefined);
  };
  return { element, read, fill, focus: () => children[0]?.[1].focus() };
}

function arrayField(schema, name, { required, path }) {
  const list = h('ol', { class: 'items' });
  const items = [];
  const addButton = h('button', { type: 'button', class: 'small', onclick: () => add().focus() }, `Add an item to ${name}`);
  const element = h('fieldset', { class: 'fields' }, h('legend', {}, labelText(name, required)), hintFor(schema, 'array').element, list, addButton);

  function add(value) {
    const index = items.length;
    const item = field(schema.items, `${name} item ${index + 1}`, { required: true, path: `${path}[${index}]` });
    const remove = h('button', { type: 'button', class: 'small link', 'aria-label': `Remove ${name} item ${index + 1}` }, 'Remove');
    const row = h('li', {}, item.element, remove);
    const entry = { item, row };
    remove.addEventListener('click', () => {
      items.splice(items.indexOf(entry), 1);
      row.remove();
      addButton.focus();
    });
    items.push(entry);
    list.append(row);
    if (value !== undefined) item.fill(value);
    return item;
  }

  const read = () => {
    const value = [];
    const errors = [];
    for (const { item } of items) {
      const got = item.read();
      errors.push(...got.errors);
      if (got.present) value.push(got.value);
    }
    const present = required || value.length > 0;
    return { present, value: present ? value : undefined, errors };
  };
  const fill = (value) => {
    items.splice(0).forEach(({ row }) => row.remove());
    if (Array.isArray(value)) value.forEach((v) => add(v));
  };
  return { element, read, fill, focus: () => addButton.focus() };
}

/** The form of a tool's `parameters` schema: the root object's fields. */
export function schemaForm(schema) {
  return objectField(schema ?? { type: 'object', properties: {} }, 'arguments', { required: true, path: '', root: true });
}
