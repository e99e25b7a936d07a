/**
 * The `backscroll` command runs src/ as one JavaScript bundle that esbuild
 * makes the first time these sources run, and again whenever any of them
 * changes: there is still nothing to build by hand.
 *
 * Why not tsx, as before: tsx compiles TypeScript in a module-loader thread
 * of its own, with its own V8 heap, that lives as long as the process. It was
 * about 50 MB of each server process's 160 MB at rest (measured with `ps` on
 * the PostgreSQL server after start), and every worker of a cluster paid it.
 *
 * The bundle is kept in node_modules/.cache/backscroll/, named by a hash of
 * every source file, so workers forked from one primary, and servers started
 * side by side by tests, all find or make the same file; it is written under
 * a temporary name and renamed, so a reader never sees half of one.
 * Packages stay outside the bundle, loaded from node_modules as before, which
 * is why the bundle must live below it. Where node_modules cannot be written
 * (a read-only install), the sources run through tsx as before.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const sourceFolder = join(projectRoot, 'src');
/** Changes whenever the way the bundle is made changes, so old bundles are never reused. */
const FORMAT = 'esm-node20-v1';

/**
 * A hash of every file under `folder` (names and contents), the folder's own
 * path (the bundle names its files by absolute URL, so two checkouts sharing
 * node_modules need two bundles), the format and esbuild's version.
 */
export function sourcesKey(folder, esbuildVersion) {
  const hash = createHash('sha256').update(`${FORMAT}\0${esbuildVersion}\0${folder}\0`);
  const files = readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
    .sort();
  for (const file of files) hash.update(`${file.slice(folder.length)}\0`).update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** node_modules/.cache/backscroll, or null where it cannot be made (a read-only install). */
function cacheFolder() {
  const folder = join(projectRoot, 'node_modules', '.cache', 'backscroll');
  try {
    mkdirSync(folder, { recursive: true });
    return folder;
  } catch {
    return null;
  }
}

/**
 * Each source file keeps its own `import.meta.url` inside the bundle, so
 * `new URL('../schema.graphql', import.meta.url)` finds the project's files
 * exactly as it does when the sources run directly (tests, tsx).
 */
const ownImportMetaUrl = {
  name: 'own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
      loader: 'ts',
    }));
  },
};

/**
 * The file URL of the bundle of src/cli.ts for the sources as they are now,
 * built if it is missing; null when there is nowhere to keep it.
 */
export async function bundledCli() {
  const folder = cacheFolder();
  if (folder === null) return null;
  const esbuild = await import('esbuild');
  const bundle = join(folder, `cli-${sourcesKey(sourceFolder, esbuild.version)}.mjs`);
  if (!existsSync(bundle)) {
    const result = await esbuild.build({
      entryPoints: [join(sourceFolder, 'cli.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      // Function and class names stay as written, for stacks in logs.
      keepNames: true,
      write: false,
      absWorkingDir: projectRoot,
      plugins: [ownImportMetaUrl],
      logLevel: 'error',
    });
    const temporary = `${bundle}.${process.pid}.tmp`;
    writeFileSync(temporary, result.outputFiles[0].text);
    renameSync(temporary, bundle);
    await esbuild.stop();
  }
  return pathToFileURL(bundle).href;
}
