import type { FactFilterColumns } from '../fact-filters.js';

/**
 * The keyword index's tables (postgres-index.ts; migrateKeywordIndex creates them and the triggers that keep
 * keyword_terms and keyword_stats in step with keyword_facts). Columns the store reads only in raw SQL (the tsvector,
 * the term frequencies, the document length) are left out. A type, not an interface: `withTables<T>()` takes only
 * types with an implicit index signature.
 */
export type KeywordTables = {
  keyword_facts: FactFilterColumns & {
    fact_id: string;
    message_id: string;
    text: string;
    context: string;
    quality_score: number;
  };
  keyword_terms: { lexeme: string; df: number };
  keyword_stats: { id: number; docs: number; tokens: number };
};
