/** Types of build-cli.mjs (plain JavaScript: `npm ci` runs it before anything is compiled). */
export declare const buildCli: (opts?: {
  root?: string;
  outdir?: string;
}) => Promise<{ outdir: string; inputs: number; ms: number }>;
