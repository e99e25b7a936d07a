import { defineConfig } from 'vite';

// No React plugin: Vite compiles TSX itself (tsconfig `jsx: react-jsx`); the
// example has no need for fast refresh. `base: './'` lets dist/ be served
// from any path.
export default defineConfig({
  base: './',
  build: { outDir: 'dist', sourcemap: true },
});
