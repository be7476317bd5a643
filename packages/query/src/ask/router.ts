/**
 * The ask query router (spec "LLM fallback chain": the query router's last resort is a regex classifier): decides
 * whether a question is answered from the facts (semantic), from the knowledge graph (graph) or both.
 */

/** Spec routes: `semantic` (vector + keyword search over facts), `graph` (entities and relationships), `both`. */
export type AskRoute = 'semantic' | 'graph' | 'both';

/**
 * Questions about who did, decided, owns or belongs to something, and how things relate: the knowledge graph's
 * Person, Decision, Project, Technology, Team and Meeting entities and their relationships answer them.
 */
const RELATIONAL =
  /\b(?:who(?:'s| is| was| are| were)? (?:decided|decides|owns?|leads?|led|runs?|manages?|approved|is responsible|works? on|worked on|maintains?|built|wrote|joined|attended|uses?|used)|decided by|decisions? (?:about|on|made)|what (?:was|were) decided|relationship|related to|connected to|depends? on|dependenc(?:y|ies)|member of|members of|which teams?|what teams?|which projects?|what projects?|reports? to|works? with|worked with|between \S+(?: \S+)? and|who (?:is|are) (?:on|in) |responsible for|in charge of)\b/i;

/** Questions that also ask for content (explanations, reasons, details, times): answered from the facts too. */
const CONTENT =
  /\b(?:how|why|explain|describe|details?|what (?:is|are|does|do|did)|when|where|summar(?:y|ise|ize)|tell me about)\b/i;

/**
 * The regex classifier (the router's last resort, and the offline default): `graph` for relational questions
 * (RELATIONAL), `both` when such a question also asks for content (CONTENT), else `semantic`.
 */
export function classifyQuestion(question: string): AskRoute {
  if (!RELATIONAL.test(question)) return 'semantic';
  return CONTENT.test(question) ? 'both' : 'graph';
}
