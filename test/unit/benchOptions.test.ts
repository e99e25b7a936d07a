import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/options.ts';

describe('Bench options: which sections run', () => {
  it('runs every section, in order, with no arguments', () => {
    expect(parseBenchArgs([])).toEqual({ ok: true, options: { sections: ['pages', 'sends', 'purge', 'fanout', 'search', 'groups', 'hides', 'inbox', 'archive', 'replicas'] } });
  });

  it('runs the sections --only names, in the usual order and each once, however they are written', () => {
    expect(parseBenchArgs(['--only', 'pages,sends'])).toEqual({ ok: true, options: { sections: ['pages', 'sends'] } });
    expect(parseBenchArgs(['--only=search, pages,search'])).toEqual({ ok: true, options: { sections: ['pages', 'search'] } });
    expect(parseBenchArgs(['--only', 'fanout'])).toEqual({ ok: true, options: { sections: ['fanout'] } });
  });

  it('refuses an unknown or empty section, naming the valid ones and echoing the value', () => {
    expect(parseBenchArgs(['--only', 'pages,seach'])).toEqual({
      ok: false,
      problem: '--only takes a comma-separated list of sections from pages, sends, purge, fanout, search, groups, hides, inbox, archive, replicas, but got: "pages,seach"',
    });
    expect(parseBenchArgs(['--only', ''])).toMatchObject({ ok: false, problem: expect.stringContaining('but got: ""') });
  });

  it('refuses other flags, a missing value and positional arguments, with the usage', () => {
    for (const argv of [['--seconds', '5'], ['--only'], ['pages']]) {
      expect(parseBenchArgs(argv)).toEqual({ ok: false, problem: expect.stringMatching(/Usage: npm run bench \[-- --only pages,sends,purge,fanout,search,groups,hides,inbox,archive,replicas\]$/) });
    }
  });
});
