import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web app's build (docs/web-app.md): `npm run build` writes it to dist/app, which the service serves
 * at `/`. Preact through Vite's own JSX transform (no Babel); every page is its own chunk, so the first
 * page loads only the shell and itself; nothing is fetched from another origin at run time.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/app', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // Nothing inlined as data: URLs, so the Content-Security-Policy needs no data: for scripts or styles.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  server: {
    // `npm run dev:app`: the service (npm run dev) answers the API, the session and the trace viewer.
    proxy: Object.fromEntries(
      ['/v1', '/auth', '/trace-viewer', '/openapi.json', '/status', '/ping'].map((p) => [
        p,
        { target: process.env.OUTPOST_DEV_SERVICE ?? 'http://localhost:3000', changeOrigin: false },
      ]),
    ),
  },
});
