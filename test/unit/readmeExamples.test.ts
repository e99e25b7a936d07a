/**
 * The README is the guide: its GraphQL examples must run against the schema
 * as it is, and its configuration table must name exactly the settings the
 * server reads (declared in `SETTINGS`, src/config.ts, which `readConfig` is
 * held to). This checks both, so the guide cannot drift silently.
 */
import { readFileSync } from 'node:fs';
import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/config.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));

/** The ```graphql blocks of the README. */
const graphqlBlocks = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);
/** Operations written inline in the README's JavaScript examples (`query: \`...\``). */
const inlineOperations = [...readme.matchAll(/(?:query: |gql\()`((?:subscription|query|mutation)[\s\S]*?)`/g)].map((m) => m[1]!);

describe('The README', () => {
  it('has GraphQL examples to check', () => {
    expect(graphqlBlocks.length).toBeGreaterThanOrEqual(5);
    expect(inlineOperations.length).toBeGreaterThanOrEqual(2);
  });

  it.each([...graphqlBlocks, ...inlineOperations].map((text, i) => [i + 1, text] as const))(
    'GraphQL example %i parses and validates against schema.graphql',
    (_n, text) => {
      const errors = validate(schema, parse(text)).map((e) => e.message);
      expect(errors).toEqual([]);
    },
  );

  it('names in its configuration table exactly the settings the server reads', () => {
    const table = readme.slice(readme.indexOf('| variable | default | meaning |'));
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    const names = rows.flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!));
    expect(names.length).toBeGreaterThan(20);
    const unread = names.filter((name) => !SETTINGS.some((setting) => setting.name === name));
    const undocumented = SETTINGS.filter((setting) => !names.includes(setting.name)).map((setting) => setting.name);
    expect({ unread, undocumented }).toEqual({ unread: [], undocumented: [] });
  });
});
