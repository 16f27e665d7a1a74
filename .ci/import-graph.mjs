// `npm run cycles`: fails when the import graph has a cycle between files or between the
// folders of libs/, when the HTTP kernel (libs/http) imports anything outside itself, or when
// runtime tuning (libs/runtime) imports anything outside itself or is imported by any other lib:
// the tricks are applied from apps/ at start-up, and the kernel offers hooks instead of calling them.
// Nor may two analytics stage folders import each other. It also holds file names to one
// pattern: a role suffix (`task.routes.ts`) is one of ROLES, and keeps analytics SQL in
// libs/analytics/compile/ (sql-text.mjs).

import madge from 'madge';
import { sqlOutsideCompile } from './sql-text.mjs';

const result = await madge(['apps', 'libs', 'bench', 'dev-tools', 'test'], {
  fileExtensions: ['ts'],
  tsConfig: 'tsconfig.json',
});
const graph = result.obj();
const problems = [];

const folderOf = (file) =>
  file.startsWith('libs/') ? file.split('/').slice(0, 2).join('/') : null;
const folders = new Map();
for (const [file, imports] of Object.entries(graph)) {
  const from = folderOf(file);
  for (const target of imports) {
    const to = folderOf(target);
    if (from === 'libs/http' && to !== 'libs/http') {
      problems.push(`libs/http imports from outside the kernel: ${file} → ${target}`);
    }
    if (from === 'libs/runtime' && to !== 'libs/runtime') {
      problems.push(`libs/runtime imports from outside itself: ${file} → ${target}`);
    }
    if (from && from !== 'libs/runtime' && to === 'libs/runtime') {
      problems.push(`a lib applies runtime tuning itself (only apps/ may): ${file} → ${target}`);
    }
    if (!from || !to || from === to) continue;
    if (!folders.has(from)) folders.set(from, new Map());
    if (!folders.get(from).has(to)) folders.get(from).set(to, `${file} → ${target}`);
  }
}

/** Every elementary cycle between folders (a handful of nodes), each reported once. */
function cycles(edges) {
  const found = new Map();
  const walk = (node, trail) => {
    for (const next of edges.get(node) ?? []) {
      const at = trail.indexOf(next);
      if (at >= 0) {
        const loop = trail.slice(at);
        const start = loop.indexOf([...loop].sort()[0]);
        const key = [...loop.slice(start), ...loop.slice(0, start)].join(' → ');
        found.set(key, loop);
      } else walk(next, [...trail, next]);
    }
  };
  for (const node of edges.keys()) walk(node, [node]);
  return [...found.keys()];
}

for (const loop of result.circular()) problems.push(`file cycle: ${loop.join(' → ')}`);
/** Cycles between the folders of `edges` (from → to → a file import that witnesses it). */
function folderCycles(edges, what) {
  const graphOf = new Map([...edges].map(([from, to]) => [from, [...to.keys()]]));
  for (const loop of cycles(graphOf)) {
    const hops = loop.split(' → ');
    const witnesses = hops.map((from, i) => edges.get(from).get(hops[(i + 1) % hops.length]));
    problems.push(`${what} cycle: ${loop}\n    ${witnesses.join('\n    ')}`);
  }
}
folderCycles(folders, 'folder');

// The analytics stages, in the order libs/analytics/query.service.ts states: a stage imports
// only stages before it. Folders not listed (values/, forecast/) and the files at the root
// (the service, the routes) sit on top: they may import any stage, and no stage imports them.
const STAGE_ORDER = [
  'catalog',
  'period',
  'parse',
  'sources',
  'compile',
  'plan',
  'execute',
  'shape',
];
const stageOf = (file) => /^libs\/analytics\/([^/]+)\//.exec(file)?.[1] ?? null;
for (const [file, imports] of Object.entries(graph)) {
  const from = STAGE_ORDER.indexOf(stageOf(file));
  if (from < 0) continue;
  for (const target of imports) {
    if (!target.startsWith('libs/analytics/')) continue;
    const to = STAGE_ORDER.indexOf(stageOf(target));
    if (to < 0)
      problems.push(`analytics stage imports what sits on top of the stages: ${file} → ${target}`);
    else if (to > from)
      problems.push(
        `analytics stage ${STAGE_ORDER[from]} imports a later stage, ${STAGE_ORDER[to]}: ${file} → ${target}`,
      );
  }
}
const stages = new Map();
for (const [file, imports] of Object.entries(graph)) {
  const from = stageOf(file);
  for (const target of imports) {
    const to = stageOf(target);
    if (!from || !to || from === to) continue;
    if (!stages.has(from)) stages.set(from, new Map());
    if (!stages.get(from).has(to)) stages.get(from).set(to, `${file} → ${target}`);
  }
}
folderCycles(stages, 'analytics stage');

// One spelling per role, so a file's role is found by its name (`*.schemas.ts`, never also
// `*.schema.ts`). A role not listed here is either a new one (add it) or a misspelling.
const ROLES = new Set([
  'routes',
  'schemas',
  'service',
  'repository',
  'tables',
  'middleware',
  'worker',
  'command',
  'bench',
  'test',
]);
for (const file of Object.keys(graph)) {
  const name = file.split('/').pop();
  const role = /^[a-z0-9-]+\.([a-z]+)\.ts$/.exec(name)?.[1];
  if (/^[a-z0-9-]+\.[a-z.]+\.ts$/.test(name) && (!role || !ROLES.has(role))) {
    problems.push(`file name outside the role pattern (${[...ROLES].join(', ')}): ${file}`);
  }
}

problems.push(...sqlOutsideCompile(Object.keys(graph)));

const files = Object.keys(graph).length;
if (problems.length > 0) {
  console.error(
    `${problems.length} import problem(s) in ${files} files:\n  ${problems.join('\n  ')}`,
  );
  process.exit(1);
}
console.log(
  `${files} files: no import cycle between files, folders or analytics stages, each stage importing only earlier ones; libs/http and libs/runtime import only themselves, and no other lib imports libs/runtime; file names follow the role pattern; no SQL in analytics outside compile/`,
);
