import { Flex, Text } from '@radix-ui/themes';
import {
  forceCenter,
  forceCollide,
  forceLink,
  forceManyBody,
  forceSimulation,
  type SimulationNodeDatum,
} from 'd3-force';
import { type KeyboardEvent, useMemo } from 'react';

/** The entity types the graph API returns (spec "Graph entity"), in legend order. */
export const ENTITY_TYPES = ['Person', 'Decision', 'Project', 'Technology', 'Team', 'Meeting'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/**
 * The colour of each entity type (Radix step-9 solids, distinct in hue and lightness); never the only cue: the legend,
 * the node labels, aria-labels and the list view name the type in text.
 */
export const TYPE_COLOR: Record<string, string> = {
  Person: 'var(--blue-9)',
  Decision: 'var(--crimson-9)',
  Project: 'var(--grass-9)',
  Technology: 'var(--amber-9)',
  Team: 'var(--violet-9)',
  Meeting: 'var(--cyan-9)',
};

/** A node and an edge as the graph routes give them (spec "Graph": subgraph, path; edges name their ends). */
export interface GraphNode {
  id: string;
  name: string;
  type: string;
}
export interface GraphEdge {
  id: string;
  type: string;
  source: string;
  target: string;
  confidence: number;
}

type Placed = GraphNode & SimulationNodeDatum;
/** Ticks the layout runs before it is drawn once (a fixed layout, never animated). */
const TICKS = 300;

/**
 * Positions for the nodes: a d3-force simulation (links, charge, collision, centring) stopped and run for TICKS ticks
 * synchronously. Edges join nodes by name (the API's edges carry source and target names); an edge whose end is not
 * among the nodes is left out. Deterministic for the same input (d3-force places nodes on a phyllotaxis at first).
 */
const layout = (nodes: readonly GraphNode[], edges: readonly GraphEdge[]) => {
  const placed: Placed[] = nodes.map((n) => ({ ...n }));
  const byName = new Map<string, Placed>();
  for (const n of placed) if (!byName.has(n.name)) byName.set(n.name, n);
  const links = edges
    .map((e) => ({ edge: e, source: byName.get(e.source), target: byName.get(e.target) }))
    .filter((l): l is { edge: GraphEdge; source: Placed; target: Placed } => !!l.source && !!l.target);
  const sim = forceSimulation<Placed>(placed)
    .force(
      'link',
      forceLink<Placed, { source: Placed; target: Placed }>(links.map((l) => ({ source: l.source, target: l.target })))
        .distance(90)
        .strength(0.6),
    )
    .force('charge', forceManyBody<Placed>().strength(-320))
    .force('collide', forceCollide<Placed>(30))
    .force('center', forceCenter(0, 0))
    .stop();
  sim.tick(TICKS);
  const xs = placed.map((n) => n.x ?? 0);
  const ys = placed.map((n) => n.y ?? 0);
  const pad = 60;
  const minX = Math.min(0, ...xs) - pad;
  const minY = Math.min(0, ...ys) - pad / 2;
  // Labels run right of their node (about 6.5 px a character at 11 px, cut at 28 characters): the box holds them.
  const right = Math.max(0, ...placed.map((n) => (n.x ?? 0) + 20 + Math.min(28, n.name.length) * 6.5));
  const w = Math.max(240, right - minX + 10);
  const h = Math.max(200, Math.max(0, ...ys) - minY + pad / 2);
  return { placed, links, viewBox: `${minX} ${minY} ${w} ${h}` };
};

/** The focus ring and hover of the SVG's nodes (Radix variables, so it follows the theme). */
const SVG_STYLE = `
.gv-node { cursor: pointer; outline: none; }
.gv-node:focus-visible .gv-ring, .gv-node:hover .gv-ring { stroke: var(--accent-9); stroke-width: 3; }
.gv-node text { font-size: 11px; fill: var(--gray-12); paint-order: stroke; stroke: var(--color-background); stroke-width: 3px; }
`;

/**
 * An SVG node-link diagram of a neighbourhood or a path: a fixed d3-force layout, nodes coloured by entity type with a
 * text legend and a label each, seeds drawn larger, the selected node ringed. Each node is focusable (role button,
 * tabindex 0, aria-label with name and type); click, Enter or Space selects it (`onSelect`). The diagram scales to its
 * container's width (viewBox); the page pairs it with a list of the same nodes and edges for keyboard and
 * screen-reader users (issue 26 point 6).
 */
export const GraphView = ({
  nodes,
  edges,
  seedIds = [],
  selectedId,
  onSelect,
  label,
}: {
  nodes: readonly GraphNode[];
  edges: readonly GraphEdge[];
  seedIds?: readonly string[];
  selectedId?: string | null;
  onSelect: (node: GraphNode) => void;
  label: string;
}) => {
  const key = `${nodes.map((n) => n.id).join(',')}|${edges.map((e) => e.id).join(',')}`;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the layout depends on the ids only (key)
  const { placed, links, viewBox } = useMemo(() => layout(nodes, edges), [key]);
  const seeds = new Set(seedIds);
  const types = ENTITY_TYPES.filter((t) => nodes.some((n) => n.type === t));
  const onKey = (e: KeyboardEvent, n: GraphNode) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      onSelect(n);
    }
  };
  return (
    <Flex direction="column" gap="2">
      <Flex gap="3" wrap="wrap" aria-label="Legend" role="group" data-testid="graph-legend">
        {types.map((t) => (
          <Flex key={t} align="center" gap="1">
            <svg width="12" height="12" aria-hidden="true">
              <circle cx="6" cy="6" r="6" fill={TYPE_COLOR[t]} />
            </svg>
            <Text size="1">{t}</Text>
          </Flex>
        ))}
      </Flex>
      {/* biome-ignore lint/a11y/useSemanticElements: an SVG groups its nodes with a role, a fieldset cannot hold them */}
      <svg
        viewBox={viewBox}
        role="group"
        aria-label={label}
        data-testid="graph-svg"
        style={{
          width: '100%',
          height: 'auto',
          maxHeight: 560,
          border: '1px solid var(--gray-a5)',
          borderRadius: 8,
          background: 'var(--gray-a2)',
          display: 'block',
        }}
      >
        <style>{SVG_STYLE}</style>
        {/* biome-ignore lint/a11y/noAriaHiddenOnFocusable: the edges are not focusable; the list view names them */}
        <g aria-hidden="true">
          {links.map(({ edge, source, target }) => (
            <line
              key={edge.id}
              x1={source.x}
              y1={source.y}
              x2={target.x}
              y2={target.y}
              stroke="var(--gray-8)"
              strokeWidth={1 + edge.confidence * 1.5}
            >
              <title>{`${edge.source} ${edge.type} ${edge.target}`}</title>
            </line>
          ))}
        </g>
        {placed.map((n) => {
          const r = seeds.has(n.id) ? 13 : 9;
          const selected = n.id === selectedId;
          return (
            // biome-ignore lint/a11y/useSemanticElements: an SVG node cannot be a <button>; role, tabindex and keys make it one
            <g
              key={n.id}
              className="gv-node"
              role="button"
              tabIndex={0}
              aria-label={`${n.name}, ${n.type}${selected ? ', selected' : ''}`}
              aria-pressed={selected}
              data-testid="graph-node"
              data-name={n.name}
              transform={`translate(${n.x ?? 0},${n.y ?? 0})`}
              onClick={() => onSelect(n)}
              onKeyDown={(e) => onKey(e, n)}
            >
              <circle
                className="gv-ring"
                r={r + 3}
                fill="none"
                stroke={selected ? 'var(--gray-12)' : 'transparent'}
                strokeWidth={selected ? 2.5 : 0}
              />
              <circle r={r} fill={TYPE_COLOR[n.type] ?? 'var(--gray-9)'} stroke="var(--color-background)" />
              <text x={r + 5} y={4}>
                {n.name.length > 28 ? `${n.name.slice(0, 27)}…` : n.name}
              </text>
            </g>
          );
        })}
      </svg>
    </Flex>
  );
};
