/**
 * USD per million tokens (input, output) of the models Atlas is usually pointed at, from the providers' public price
 * lists (OpenAI, 2025). A model is matched by the longest known name it starts with (`gpt-4o-mini-2024-07-18` →
 * `gpt-4o-mini`); any other model (Ollama, vLLM, a self-hosted endpoint) costs 0.
 */
export const LLM_PRICES_USD_PER_MTOK: Readonly<Record<string, { input: number; output: number }>> = {
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
  'o3-mini': { input: 1.1, output: 4.4 },
  'o4-mini': { input: 1.1, output: 4.4 },
  'text-embedding-3-small': { input: 0.02, output: 0 },
  'text-embedding-3-large': { input: 0.13, output: 0 },
};

/** Estimated cost in USD of one call: prompt and completion tokens at the model's price (0 for unknown models). Pure. */
export const estimateLlmCostUsd = (model: string, promptTokens: number, completionTokens: number): number => {
  const name = model.toLowerCase().replace(/^.*\//, ''); // `openai/gpt-4o` (routers) → `gpt-4o`
  const key = Object.keys(LLM_PRICES_USD_PER_MTOK)
    .filter((k) => name.startsWith(k))
    .sort((a, b) => b.length - a.length)[0];
  if (!key) return 0;
  const p = LLM_PRICES_USD_PER_MTOK[key]!;
  return (promptTokens * p.input + completionTokens * p.output) / 1_000_000;
};
