/**
 * bin/bundle.js names the bundle of src/ by a hash of the sources: a
 * changed file must make a new bundle (or the server would run old code),
 * and an unchanged tree must find the one already built (or every worker
 * would build its own).
 */
import { mkdtempSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript without types: bin/ runs before any TypeScript can.
import { sourcesKey } from '../../bin/bundle.js';

function sourceTree(files: Record<string, string>): string {
  const folder = mkdtempSync(join(tmpdir(), 'backscroll-bundle-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(folder, name, '..'), { recursive: true });
    writeFileSync(join(folder, name), text);
  }
  return folder;
}

describe('sourcesKey', () => {
  const files = { 'cli.ts': 'export {}', 'db/client.ts': 'export const a = 1;' };

  it('is the same for the same tree, read twice', () => {
    const folder = sourceTree(files);
    expect(sourcesKey(folder, '0.25.12')).toBe(sourcesKey(folder, '0.25.12'));
  });

  it('changes when a file deep in the tree changes, is added, or is renamed', () => {
    const folder = sourceTree(files);
    const before = sourcesKey(folder, '0.25.12');
    writeFileSync(join(folder, 'db/client.ts'), 'export const a = 2;');
    const edited = sourcesKey(folder, '0.25.12');
    expect(edited).not.toBe(before);
    writeFileSync(join(folder, 'db/extra.ts'), '');
    const added = sourcesKey(folder, '0.25.12');
    expect(added).not.toBe(edited);
    renameSync(join(folder, 'db/extra.ts'), join(folder, 'db/other.ts'));
    expect(sourcesKey(folder, '0.25.12')).not.toBe(added);
  });

  it('differs between two checkouts of the same sources (the bundle holds their paths), and between esbuild versions', () => {
    const one = sourceTree(files);
    const two = sourceTree(files);
    expect(sourcesKey(one, '0.25.12')).not.toBe(sourcesKey(two, '0.25.12'));
    expect(sourcesKey(one, '0.25.12')).not.toBe(sourcesKey(one, '0.26.0'));
  });
});
