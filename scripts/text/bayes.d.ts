/** `bayes` 1.0.0 ships no types: the factory, typed loosely; scripts/text/nb-baseline.ts reads the fields it uses. */
declare module "bayes" {
  export default function bayes(options?: { tokenizer?: (text: string) => string[] }): unknown;
}
