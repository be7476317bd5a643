/** Types of build-state.mjs (plain JavaScript: the bin reads it before anything is compiled). */
export declare const STAMP: string;
export declare const compiledCli: (
  root: string,
  dir?: string,
) => { current: true; entry: string } | { current: false; reason: string };
