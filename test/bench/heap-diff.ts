import { readFileSync } from 'node:fs';

/**
 * Compares two heap snapshots of one process (`--heapsnapshot-signal`, as the soak takes them with
 * BENCH_SOAK_HEAPSNAPSHOTS): V8 keeps an object's id across snapshots of a process, so the objects
 * of the later snapshot whose ids the earlier one lacks are those allocated in between and still
 * alive. Prints them grouped by constructor (or kind), largest growth first, each with the chain
 * of retainers of one of its objects up to a GC root.
 *
 *   node --import tsx test/bench/heap-diff.ts before.heapsnapshot after.heapsnapshot [groups]
 */

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

function load(path: string) {
  const raw = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const { node_fields, node_types, edge_fields, edge_types } = raw.snapshot.meta;
  const nodeWidth = node_fields.length;
  const edgeWidth = edge_fields.length;
  const at = (field: string) => node_fields.indexOf(field);
  const [TYPE, NAME, ID, SIZE, EDGES] = ['type', 'name', 'id', 'self_size', 'edge_count'].map(at) as number[];
  const [E_TYPE, E_NAME, E_TO] = ['type', 'name_or_index', 'to_node'].map((f) => edge_fields.indexOf(f)) as number[];
  const count = raw.nodes.length / nodeWidth;
  const firstEdge = new Uint32Array(count + 1);
  for (let n = 0; n < count; n++) firstEdge[n + 1] = firstEdge[n]! + raw.nodes[n * nodeWidth + EDGES!]!;
  // Reverse edges: the first strong retainer of each node (weak edges do not keep anything alive).
  const retainer = new Int32Array(count).fill(-1);
  const retainerEdge = new Int32Array(count).fill(-1);
  for (let n = 0; n < count; n++) {
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e++) {
      const base = e * edgeWidth;
      if (edge_types[0][raw.edges[base + E_TYPE!]!] === 'weak') continue;
      const to = raw.edges[base + E_TO!]! / nodeWidth;
      if (retainer[to] === -1) {
        retainer[to] = n;
        retainerEdge[to] = base;
      }
    }
  }
  const node = (n: number) => ({
    type: node_types[0][raw.nodes[n * nodeWidth + TYPE!]!]!,
    name: raw.strings[raw.nodes[n * nodeWidth + NAME!]!]!,
    id: raw.nodes[n * nodeWidth + ID!]!,
    size: raw.nodes[n * nodeWidth + SIZE!]!,
  });
  const edgeName = (base: number) => {
    const kind = edge_types[0][raw.edges[base + E_TYPE!]!];
    const value = raw.edges[base + E_NAME!]!;
    return kind === 'element' || kind === 'hidden' ? `[${value}]` : String(raw.strings[value]);
  };
  return { count, node, retainer, retainerEdge, edgeName };
}

const group = (n: { type: string; name: string }) =>
  n.type === 'object' || n.type === 'closure' ? `${n.type} ${n.name}` : `(${n.type})`;

function chain(heap: ReturnType<typeof load>, start: number): string {
  const steps: string[] = [];
  let n = start;
  for (let depth = 0; depth < 14 && heap.retainer[n]! >= 0; depth++) {
    const parent = heap.retainer[n]!;
    const described = heap.node(parent);
    steps.push(`${heap.edgeName(heap.retainerEdge[n]!)} <- ${described.type} ${described.name.slice(0, 60)}`);
    n = parent;
  }
  return steps.join('\n      ');
}

const [beforePath, afterPath, groupsArg] = process.argv.slice(2);
if (!beforePath || !afterPath) throw new Error('usage: heap-diff.ts before.heapsnapshot after.heapsnapshot [groups]');
const megabytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(2);
const before = load(beforePath);
const seen = new Set<number>();
let beforeBytes = 0;
for (let n = 0; n < before.count; n++) {
  seen.add(before.node(n).id);
  beforeBytes += before.node(n).size;
}
const after = load(afterPath);
let afterBytes = 0;
for (let n = 0; n < after.count; n++) afterBytes += after.node(n).size;
console.log(
  `before: ${megabytes(beforeBytes)} MB in ${before.count} objects; after: ${megabytes(afterBytes)} MB in ${after.count}`,
);
const grown = new Map<string, { count: number; bytes: number; sample: number }>();
let total = 0;
for (let n = 0; n < after.count; n++) {
  const described = after.node(n);
  if (seen.has(described.id)) continue;
  total += described.size;
  const key = group(described);
  const entry = grown.get(key) ?? { count: 0, bytes: 0, sample: n };
  entry.count += 1;
  entry.bytes += described.size;
  grown.set(key, entry);
}
console.log(`objects in ${afterPath} not in ${beforePath}: ${megabytes(total)} MB`);
for (const [key, entry] of [...grown].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, Number(groupsArg ?? 15)))
  console.log(
    `${(entry.bytes / 1024).toFixed(0).padStart(8)} KB ${String(entry.count).padStart(8)}  ${key}\n      ${chain(after, entry.sample)}`,
  );
