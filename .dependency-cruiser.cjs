/**
 * The floors of the house as a build check (docs/layering.md). `npm run lint` runs
 *   depcruise packages services --config .dependency-cruiser.cjs
 * and fails on any import below that breaks a rule: there is no baseline of tolerated violations.
 *
 * Packages: `core` at the ground, `db` above it, the rest side by side; each package's allowed @atlas imports are
 * listed in FLOORS (production code) and TEST_EXTRAS (its tests may also assemble these). Services stand above the
 * packages and do not import each other, except `runtime` (the composition root: api, projectors, bot) and `cli`, which
 * imports `runtime` only: never api, projectors or bot themselves. Every @atlas import is declared in the importer's package.json (`dependencies`, or `devDependencies` for an
 * import only tests make). No relative import leaves its workspace, and no import circle exists.
 */
const fs = require('node:fs');
const path = require('node:path');

/** A test file: its imports may use devDependencies and TEST_EXTRAS. */
const TEST = '(\\.test\\.ts|\\.test-support\\.ts)$';

/** package -> the packages its production code may import (besides itself). */
const FLOORS = {
  core: [],
  db: ['core'],
  eventlog: ['core', 'db'],
  stores: ['core', 'db'],
  platforms: ['core'],
  providers: ['core'],
  pipeline: ['core'],
  wiki: ['core'],
};

/** package -> the further packages its tests may import (integration tests of a package with its neighbours). */
const TEST_EXTRAS = {
  pipeline: ['eventlog', 'providers'],
  wiki: ['platforms', 'providers', 'stores'],
};

/**
 * service -> the services it may import (besides itself); a service not listed may import none. The cli (production
 * code and tests) reaches api, projectors and bot only through the runtime: cli -> runtime -> api | projectors | bot.
 */
const SERVICE_IMPORTS = {
  cli: ['runtime'],
  runtime: ['api', 'bot', 'projectors'],
};

const alt = (names) => names.join('|');

const workspaces = ['packages', 'services'].flatMap((dir) =>
  fs
    .readdirSync(path.join(__dirname, dir))
    .filter((w) => fs.existsSync(path.join(__dirname, dir, w, 'package.json')))
    .map((w) => ({ dir, name: w, manifest: require(path.join(__dirname, dir, w, 'package.json')) })),
);

/** The workspace folders ("packages/db") of the @atlas names a manifest field declares. */
const declared = (field) =>
  Object.keys(field ?? {})
    .filter((n) => n.startsWith('@atlas/'))
    .map((n) => workspaces.find((w) => w.manifest.name === n))
    .filter(Boolean)
    .map((w) => `${w.dir}/${w.name}`);

const floorRules = Object.entries(FLOORS).flatMap(([pkg, allowed]) => [
  {
    name: `floor-${pkg}`,
    comment: `packages/${pkg} imports only ${allowed.length ? allowed.join(', ') : 'no other package'} (FLOORS)`,
    severity: 'error',
    from: { path: `^packages/${pkg}/`, pathNot: TEST },
    to: { path: `^packages/(?!(${alt([pkg, ...allowed])})/)` },
  },
  {
    name: `floor-${pkg}-tests`,
    comment: `the tests of packages/${pkg} import only the packages of FLOORS and TEST_EXTRAS`,
    severity: 'error',
    from: { path: `^packages/${pkg}/.*${TEST}` },
    to: { path: `^packages/(?!(${alt([pkg, ...allowed, ...(TEST_EXTRAS[pkg] ?? [])])})/)` },
  },
]);

const declaredRules = workspaces.flatMap((w) => {
  const self = `${w.dir}/${w.name}`;
  const prod = [self, ...declared(w.manifest.dependencies)];
  const dev = [...prod, ...declared(w.manifest.devDependencies)];
  return [
    {
      name: 'not-declared',
      comment: `${self}: an @atlas import not in its package.json dependencies`,
      severity: 'error',
      from: { path: `^${self}/`, pathNot: TEST },
      to: { dependencyTypes: ['aliased-workspace'], pathNot: `^(${alt(prod)})/` },
    },
    {
      name: 'not-declared',
      comment: `${self}: a test's @atlas import not in its package.json dependencies or devDependencies`,
      severity: 'error',
      from: { path: `^${self}/.*${TEST}` },
      to: { dependencyTypes: ['aliased-workspace'], pathNot: `^(${alt(dev)})/` },
    },
  ];
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'files that import each other in a loop (type-only imports count)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'package-imports-service',
      comment: 'a package imports a service: packages are the floors below every service',
      severity: 'error',
      from: { path: '^packages/', pathNot: TEST },
      to: { path: '^services/' },
    },
    {
      name: 'package-imports-service',
      comment:
        "a package's test imports a service other than the composition root (@atlas/runtime, for a whole runtime)",
      severity: 'error',
      from: { path: `^packages/.*${TEST}` },
      to: { path: '^services/', pathNot: '^services/runtime/' },
    },
    ...floorRules,
    {
      name: 'service-imports-service',
      comment: 'services do not import each other (SERVICE_IMPORTS)',
      severity: 'error',
      from: {
        path: `^services/(?!${Object.keys(SERVICE_IMPORTS)
          .map((s) => `${s}/`)
          .join('|')})([^/]+)/`,
        pathNot: TEST,
      },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'service-imports-service',
      comment: "a service's tests import only its own service and the composition root (@atlas/runtime)",
      severity: 'error',
      from: {
        path: `^services/(?!${Object.keys(SERVICE_IMPORTS)
          .map((s) => `${s}/`)
          .join('|')})([^/]+)/.*${TEST}`,
      },
      to: { path: '^services/', pathNot: ['^services/$1/', '^services/runtime/'] },
    },
    ...Object.entries(SERVICE_IMPORTS).map(([svc, allowed]) => ({
      name: 'service-imports-service',
      comment: `services/${svc} imports only the services ${allowed.join(', ')} (SERVICE_IMPORTS)`,
      severity: 'error',
      from: { path: `^services/${svc}/` },
      to: { path: `^services/(?!(${alt([svc, ...allowed])})/)` },
    })),
    {
      name: 'relative-across-workspaces',
      comment: 'a relative import leaves its workspace: import the other workspace by its @atlas name',
      severity: 'error',
      from: { path: '^(packages|services)/([^/]+)/' },
      to: { dependencyTypes: ['local'], dependencyTypesNot: ['aliased-workspace'], pathNot: '^$1/$2/' },
    },
    ...declaredRules,
    {
      name: 'not-to-unresolvable',
      comment: 'an import that does not resolve',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-non-package-json',
      comment: 'an npm package that no package.json (the workspace or the root) declares',
      severity: 'error',
      from: { path: '^(packages|services)/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|data)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    combinedDependencies: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.mjs', '.js', '.json'],
    },
    cache: { folder: 'node_modules/.cache/dependency-cruiser', strategy: 'content' },
  },
};
