/** Types of scripts/transpile.mjs (plain JavaScript, run before dist/ exists). */
export declare const STAMP_FILE: string;
/** Compiles `dirs` of `root` into `outdir` unless the stamp in `outdir` says they are up to date. */
export declare function transpile(opts?: { root?: string; outdir?: string; dirs?: string[] }): Promise<{ compiled: boolean; files: number }>;
