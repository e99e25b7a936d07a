/**
 * The browser test's fixtures: the built `examples/web` page (built here when
 * `dist/` is missing or older than its sources) and a tiny static server for it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WEB = join(ROOT, 'examples/web');
export const DIST = join(WEB, 'dist');
/** The trusted-documents manifest the build writes (GraphQL Code Generator's client preset, `persistedDocuments`). */
export const MANIFEST = join(WEB, 'src/gql/persisted-documents.json');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The newest modification time of the files under `path` (skipping generated and installed folders). */
function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules' || entry === 'dist' || entry === 'gql') continue;
    newest = Math.max(newest, newestMtime(join(path, entry)));
  }
  return newest;
}

/** Builds examples/web unless dist/ is newer than everything it is built from. Returns what it did. */
export function ensureExampleBuilt(): string {
  const index = join(DIST, 'index.html');
  const sources = ['src', 'index.html', 'codegen.ts', 'vite.config.ts', 'package-lock.json'].map((p) => join(WEB, p));
  const newestSource = Math.max(...sources.map(newestMtime), statSync(join(ROOT, 'schema.graphql')).mtimeMs);
  if (existsSync(index) && existsSync(MANIFEST) && statSync(index).mtimeMs >= newestSource) return 'examples/web/dist is up to date';
  const run = (args: string[]) => execFileSync('npm', args, { cwd: WEB, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  const started = Date.now();
  if (!existsSync(join(WEB, 'node_modules'))) run(['ci', '--no-audit', '--no-fund']);
  run(['run', 'build']);
  return `built examples/web in ${((Date.now() - started) / 1000).toFixed(1)} s`;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
};

/** Serves `folder` on 127.0.0.1 (any free port); `/` is index.html. */
export async function serveStatic(folder: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const file = normalize(join(folder, path === '/' ? 'index.html' : path));
    if (!file.startsWith(folder + sep) || !existsSync(file) || statSync(file).isDirectory()) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
