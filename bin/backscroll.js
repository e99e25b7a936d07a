#!/usr/bin/env -S node --no-memory-reducer
// The flag keeps a quiet server's compiled code (src/workerFlags.ts); V8 takes it only on the command line.
// Runs src/ as one bundle that bin/bundle.js builds when the sources change
// (it says why not tsx); through tsx only where the bundle cannot be kept.
import { bundledCli } from './bundle.js';

const bundle = await bundledCli();
if (bundle !== null) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
