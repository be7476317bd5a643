// The fixed pages of a channel's wiki (spec "Wiki"): ids, titles, section numbers and the frame each page fills.
import type { WikiPage } from '../types.js';

/** The fixed pages (spec "Wiki": always present, with these section numbers). */
export const FIXED_PAGES = [
  { id: 'overview', title: 'Overview', section: '1' },
  { id: 'people', title: 'People', section: '2' },
  { id: 'decisions', title: 'Decisions', section: '3' },
  { id: 'faq', title: 'FAQ', section: '4' },
  { id: 'glossary', title: 'Glossary', section: '5' },
  { id: 'activity', title: 'Activity', section: '6' },
  { id: 'topics', title: 'Topics', section: '7' },
] as const;

/** What the People and Decisions pages say when the graph store is down (spec "Degraded behaviour"). */
export const GRAPH_UNAVAILABLE_NOTICE =
  '> The knowledge graph is temporarily unavailable, so this page cannot be built from it right now. It will be regenerated once the graph store recovers.';

export type FixedBase = (
  id: (typeof FIXED_PAGES)[number]['id'],
  memoryCount: number,
  lastUpdated: string,
) => Omit<WikiPage, 'citations' | 'content' | 'summary'>;
