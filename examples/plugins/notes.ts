/**
 * An example toolport plugin that uses what MCP clients get beyond tools (docs/plugins.md): a
 * note-taking tool that logs to the client (`context.log`), asks the user to confirm
 * (`context.elicit`) and the client's model for a title (`context.sample`), answers with an image
 * (`attachments`); the notes as resources, a resource template and a prompt, with completions and
 * subscriptions. Run it with: TOOL_PLUGINS=examples/plugins/notes.ts npm start
 */
import { defineTool, definePrompt, defineResource, defineResourceTemplate, error, ok } from '../../src/index.ts';

const notes = new Map<string, string>([['welcome', 'Notes live in memory while the server runs.']]);
/** Told when the list of notes changes (subscribers of notes://index get notifications/resources/updated). */
const listeners = new Set<() => void>();
const changed = () => listeners.forEach((tell) => tell());

/** A 1×1 PNG: a stand-in for a real chart. */
const DOT = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

const addNote = defineTool<{ text: string; title?: string }, { title: string }>({
  name: 'note_add',
  description: 'Add a note; asks the user to confirm, and the client model for a title when none is given.',
  parameters: {
    type: 'object',
    properties: { text: { type: 'string', minLength: 1 }, title: { type: 'string', pattern: '^[a-z0-9-]{1,40}$' } },
    required: ['text'],
  },
  async handler({ text, title }, context) {
    context.log('info', 'adding a note', { chars: text.length });
    const answer = await context.elicit({
      message: `Save this note?\n\n${text}`,
      schema: { type: 'object', properties: { save: { type: 'boolean', title: 'Save it', default: true } }, required: ['save'] },
    });
    if (answer.action !== 'accept' || answer.content?.save !== true) return error('The user did not want this note saved; ask what to change.');
    let name = title;
    if (name === undefined) {
      const sampled = await context.sample({
        messages: [{ role: 'user', content: { type: 'text', text: `A title of at most three lowercase words joined by dashes for: ${text}` } }],
        maxTokens: 20,
      });
      name = String(sampled.content.text ?? 'untitled')
        .toLowerCase()
        .replace(/[^a-z0-9-]+/g, '-')
        .slice(0, 40);
    }
    notes.set(name, text);
    changed();
    context.log('notice', 'note saved', { title: name });
    return { ...ok({ title: name }, `Saved the note "${name}".`), attachments: [{ type: 'image', data: DOT, mimeType: 'image/png' }] };
  },
});

const index = defineResource({
  uri: 'notes://index',
  name: 'notes_index',
  title: 'Every note',
  mimeType: 'application/json',
  read: () => JSON.stringify([...notes.keys()]),
  watch(tell) {
    listeners.add(tell);
    return () => listeners.delete(tell);
  },
});

const note = defineResourceTemplate({
  uriTemplate: 'notes://note/{title}',
  name: 'notes_note',
  title: 'One note',
  mimeType: 'text/plain',
  read: (uri, { title }) => notes.get(title ?? '') ?? `There is no note "${title}".`,
  complete: { title: (typed) => [...notes.keys()].filter((title) => title.startsWith(typed)) },
});

const summarize = definePrompt({
  name: 'notes_summarize',
  title: 'Summarize a note',
  description: 'Ask the model to summarize one note in a given tone.',
  arguments: [
    { name: 'title', description: 'the note', required: true },
    { name: 'tone', description: 'formal, casual or terse' },
  ],
  get: ({ title, tone }) => ({
    messages: [
      { role: 'user', content: { type: 'resource', resource: { uri: `notes://note/${title}`, mimeType: 'text/plain', text: notes.get(title ?? '') ?? '' } } },
      { role: 'user', content: { type: 'text', text: `Summarize the note above in a ${tone ?? 'terse'} tone.` } },
    ],
  }),
  complete: {
    title: (typed) => [...notes.keys()].filter((title) => title.startsWith(typed)),
    tone: (typed) => ['formal', 'casual', 'terse'].filter((tone) => tone.startsWith(typed)),
  },
});

export default [addNote, index, note, summarize];
