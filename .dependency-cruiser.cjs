/**
 * The layers of src/, enforced: `npx depcruise src --validate` fails on an
 * import that points the wrong way, naming the rule it broke.
 *
 *   history (pure rules)  <  db  <  store, search, archive  <  graphql  <  http, realtime, metrics  <  wiring
 *
 * config.ts and log.ts are read by every layer and import only history.
 * auth/ (token verification) imports only history; graphql and the
 * transports use it. Wiring (server.ts, cli.ts, workers.ts, sendForwarding.ts, purge*.ts,
 * sandboxDocument.ts, demo/, seed/) puts the layers together; nothing else
 * imports it.
 */
const WIRING = '^src/(server|cli|workers|sendForwarding|purge|purgeSchedule|sandboxDocument)\\.ts$|^src/(demo|seed)/';
const TRANSPORTS = '^src/(http|realtime|metrics)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules must not import each other in a circle: a cycle means two ideas that cannot be read or changed apart.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'history-is-pure',
      severity: 'error',
      comment: 'src/history holds pure rules: it may import only other history modules (no database, GraphQL, clock or I/O of ours).',
      from: { path: '^src/history/' },
      to: { path: '^src/', pathNot: '^src/history/' },
    },
    {
      name: 'config-and-log-are-base',
      severity: 'error',
      comment: 'config.ts and log.ts are read by every layer, so they may import only src/history.',
      from: { path: '^src/(config|log)\\.ts$' },
      to: { path: '^src/', pathNot: '^src/history/|^src/(config|log)\\.ts$' },
    },
    {
      name: 'db-below-store',
      severity: 'error',
      comment: 'src/db (clients, runner, schema, migrations) may import src/history, config.ts and log.ts only; the store and everything above it build on it.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: '^src/(db|history)/|^src/(config|log)\\.ts$' },
    },
    {
      name: 'store-knows-sql-not-graphql',
      severity: 'error',
      comment:
        'src/store, src/search and src/archive (cold segments of bodies) know SQL and src/history (through src/db): never GraphQL, auth, the transports or the wiring.',
      from: { path: '^src/(store|search|archive)/' },
      to: { path: '^src/', pathNot: '^src/(store|search|archive|db|history)/|^src/(config|log)\\.ts$' },
    },
    {
      name: 'auth-stands-alone',
      severity: 'error',
      comment: 'src/auth verifies tokens: it may import src/history, config.ts and log.ts only.',
      from: { path: '^src/auth/' },
      to: { path: '^src/', pathNot: '^src/(auth|history)/|^src/(config|log)\\.ts$' },
    },
    {
      name: 'graphql-below-transports',
      severity: 'error',
      comment: 'src/graphql reaches data through src/store (and src/search), never through a transport (http, realtime, metrics) or the wiring.',
      from: { path: '^src/graphql/' },
      to: { path: `${TRANSPORTS}|${WIRING}` },
    },
    {
      name: 'transports-apart',
      severity: 'error',
      comment: 'The transports (http, realtime) carry requests in and out side by side: neither imports the other, and neither imports the wiring.',
      from: { path: '^src/(http|realtime)/' },
      to: { path: `^src/(http|realtime)/|${WIRING}`, pathNot: '$1' },
    },
    {
      name: 'metrics-below-wiring',
      severity: 'error',
      comment: 'src/metrics observes the graphql layer and the pool; it may not import the wiring.',
      from: { path: '^src/metrics/' },
      to: { path: WIRING },
    },
    {
      name: 'nothing-imports-wiring',
      severity: 'error',
      comment: 'Wiring (server.ts, cli.ts, workers.ts, purge.ts, purgeSchedule.ts, sandboxDocument.ts, demo/, seed/) puts the layers together; only other wiring may import it.',
      from: { path: '^src/', pathNot: WIRING },
      to: { path: WIRING },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/graphql/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
