/** A session's ToolInvoked events as the routes and tools answer them: each with its sequence number. */
import type { EventPage } from '../store/types.ts';

export function numberedEvents(page: EventPage): object[] {
  return page.events.map((text, i) => ({ seq: page.firstSeq + i, ...(JSON.parse(text) as object) }));
}
