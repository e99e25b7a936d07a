/**
 * The command line of `npm run bench`: which sections run. Pure, so it is
 * tested without running a benchmark.
 *
 *   npm run bench                          every section
 *   npm run bench -- --only pages,sends    those sections, in the usual order
 */
import { parseArgs } from 'node:util';

/** The sections of a run, in the order they run. */
export const SECTIONS = ['pages', 'sends', 'purge', 'fanout', 'search', 'groups', 'hides', 'inbox', 'archive', 'replicas'] as const;
export type Section = (typeof SECTIONS)[number];

/** What a run does. */
export interface BenchOptions {
  /** The sections to run, in `SECTIONS` order, each once. */
  sections: Section[];
}

/** The options of `argv` (the arguments after the script), or what is wrong with them. */
export function parseBenchArgs(argv: string[]): { ok: true; options: BenchOptions } | { ok: false; problem: string } {
  let values: { only?: string };
  try {
    ({ values } = parseArgs({ args: argv, options: { only: { type: 'string' } }, strict: true, allowPositionals: false }));
  } catch (error) {
    return { ok: false, problem: `${(error as Error).message}. Usage: npm run bench [-- --only ${SECTIONS.join(',')}]` };
  }
  if (values.only === undefined) return { ok: true, options: { sections: [...SECTIONS] } };
  const asked = values.only.split(',').map((name) => name.trim());
  const unknown = asked.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    return {
      ok: false,
      problem: `--only takes a comma-separated list of sections from ${SECTIONS.join(', ')}, but got: ${JSON.stringify(values.only)}`,
    };
  }
  return { ok: true, options: { sections: SECTIONS.filter((section) => asked.includes(section)) } };
}
