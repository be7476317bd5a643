import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The web UI's build (docs/web.md): `npm run build:web` (and `npm ci`, through the root package's `prepare`) writes
 * web/dist, which `atlas start` serves at `/`. `npm run dev --workspace web` serves it with hot reload and proxies the
 * API to a running Atlas (ATLAS_URL, default http://127.0.0.1:8000).
 */
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1500 },
  server: {
    proxy: Object.fromEntries(
      ['/api', '/wiki', '/mcp', '/metrics'].map((p) => [p, process.env.ATLAS_URL ?? 'http://127.0.0.1:8000']),
    ),
  },
});
