import { AtlasError } from '@atlas/core';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsBase, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { z } from 'zod';
import { parseJsonAnswer, repairMessages, withJsonInstruction } from './json-output.js';
import {
  estimateTokens,
  hasImages,
  type LlmCompletion,
  type LlmJsonOptions,
  type LlmJsonResult,
  type LlmMessage,
  type LlmProvider,
  LlmProviderError,
  type LlmRequest,
  type LlmStreamEvent,
  type LlmUsage,
  messageChars,
} from './port.js';

export interface OpenAiLlmOptions {
  /** Base URL of any OpenAI-compatible API (OpenAI, Ollama, vLLM, ...), e.g. `http://127.0.0.1:11434/v1`. */
  baseURL: string;
  /** May be omitted for local servers. */
  apiKey?: string | undefined;
  /** The chat model name sent with every request. */
  model: string;
  /** Per-call timeout, ms (default 10,000: spec "Degraded behaviour", primary LLM provider). */
  timeoutMs?: number | undefined;
  /** Whether the model accepts image content parts (config LLM_ACCEPTS_IMAGES; default false). */
  acceptsImages?: boolean | undefined;
  /**
   * Send `response_format: {type: 'json_object'}` with `json` requests (default true). A server that refuses it with
   * a 400 is asked again without it, and never again with it.
   */
  jsonResponseFormat?: boolean | undefined;
}

/** The seconds of a Retry-After header (delta-seconds or an HTTP date), if there is one. */
const retryAfterSeconds = (headers: Record<string, string> | Headers | undefined): number | undefined => {
  const raw = headers instanceof Headers ? headers.get('retry-after') : headers?.['retry-after'];
  if (!raw) return undefined;
  const n = Number(raw);
  if (Number.isFinite(n)) return n;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.round((at - Date.now()) / 1000));
};

/**
 * An LlmProvider over any OpenAI-compatible chat completions endpoint (the `openai` package, maxRetries 0: the chain
 * does failover). `provider` is `<model>@<host>`. Timeouts go through an AbortSignal per call: the whole call for
 * `complete`, each wait for the next chunk for `stream`. Streams ask for usage (`stream_options.include_usage`); a
 * server that sends none gets usage estimated as ceil(chars / 4) and marked `estimated`.
 */
export class OpenAiLlmProvider implements LlmProvider {
  readonly provider: string;
  readonly model: string;
  readonly timeoutMs: number;
  readonly acceptsImages: boolean;
  private readonly client: OpenAI;
  private jsonResponseFormat: boolean;

  constructor(opts: OpenAiLlmOptions) {
    this.model = opts.model;
    this.provider = `${opts.model}@${new URL(opts.baseURL).host}`;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.acceptsImages = opts.acceptsImages ?? false;
    this.jsonResponseFormat = opts.jsonResponseFormat ?? true;
    this.client = new OpenAI({ baseURL: opts.baseURL, apiKey: opts.apiKey ?? 'none', maxRetries: 0 });
  }

  async complete(req: LlmRequest): Promise<LlmCompletion> {
    return this.completeWith(req, {});
  }

  async *stream(req: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    this.checkImages(req.messages);
    const call = this.deadline(req.signal);
    let text = '';
    let usage: LlmUsage | undefined;
    let finished = false;
    try {
      call.arm();
      const chunks = await this.client.chat.completions.create(
        { ...this.body(req), stream: true, stream_options: { include_usage: true } },
        { signal: call.signal },
      );
      for await (const chunk of chunks) {
        call.disarm();
        if (chunk.usage)
          usage = { prompt_tokens: chunk.usage.prompt_tokens, completion_tokens: chunk.usage.completion_tokens };
        const choice = chunk.choices?.[0];
        if (choice?.finish_reason) finished = true;
        const delta = choice?.delta?.content;
        if (delta) {
          text += delta;
          yield { type: 'delta', text: delta }; // the clock stops while the consumer holds the delta
        }
        call.arm();
      }
    } catch (err) {
      throw call.failure(this.failure(err));
    } finally {
      call.end();
    }
    // The openai package ends a stream quietly when it is aborted or cut before [DONE]: say why it ended early.
    if (call.timedOut || req.signal?.aborted || !finished) {
      throw call.failure(new LlmProviderError(this.provider, 'network', 'stream ended before its finish_reason'));
    }
    yield {
      type: 'done',
      text,
      usage: usage ?? this.estimate(req.messages, text),
      provider: this.provider,
      model: this.model,
    };
  }

  async json<T>(
    schema: z.ZodType<T>,
    messages: readonly LlmMessage[],
    opts: LlmJsonOptions = {},
  ): Promise<LlmJsonResult<T>> {
    const asked = withJsonInstruction(messages);
    const first = await this.completeJson({ ...opts, messages: asked });
    const parsed = parseJsonAnswer(schema, first.text);
    if (parsed.ok)
      return { value: parsed.value, usage: first.usage, repaired: false, provider: this.provider, model: this.model };
    const second = await this.completeJson({
      ...opts,
      messages: [...asked, ...repairMessages(first.text, parsed.problem)],
    });
    const usage = {
      prompt_tokens: first.usage.prompt_tokens + second.usage.prompt_tokens,
      completion_tokens: first.usage.completion_tokens + second.usage.completion_tokens,
      ...(first.usage.estimated || second.usage.estimated ? { estimated: true } : {}),
    };
    const repaired = parseJsonAnswer(schema, second.text);
    if (repaired.ok)
      return { value: repaired.value, usage, repaired: true, provider: this.provider, model: this.model };
    throw new LlmProviderError(this.provider, 'malformed_output', `invalid JSON after one repair: ${repaired.problem}`);
  }

  /** A json_object completion; a server that refuses response_format (400) is asked again without it. */
  private async completeJson(req: LlmRequest): Promise<LlmCompletion> {
    if (!this.jsonResponseFormat) return this.completeWith(req, {});
    try {
      return await this.completeWith(req, { response_format: { type: 'json_object' } });
    } catch (err) {
      if (!(err instanceof LlmProviderError && err.httpStatus === 400)) throw err;
      this.jsonResponseFormat = false;
      return this.completeWith(req, {});
    }
  }

  private async completeWith(req: LlmRequest, extra: Partial<ChatCompletionCreateParamsBase>): Promise<LlmCompletion> {
    this.checkImages(req.messages);
    const call = this.deadline(req.signal);
    try {
      call.arm();
      const r = await this.client.chat.completions.create(
        { ...this.body(req), ...extra, stream: false },
        { signal: call.signal },
      );
      const choice = r.choices?.[0];
      if (!choice) throw new LlmProviderError(this.provider, 'malformed_output', 'answer without choices');
      const text = choice.message?.content ?? '';
      const usage = r.usage
        ? { prompt_tokens: r.usage.prompt_tokens, completion_tokens: r.usage.completion_tokens }
        : this.estimate(req.messages, text);
      return { text, usage, provider: this.provider, model: this.model };
    } catch (err) {
      throw call.failure(this.failure(err));
    } finally {
      call.end();
    }
  }

  private body(req: LlmRequest) {
    return {
      model: this.model,
      messages: req.messages as ChatCompletionMessageParam[],
      ...(req.maxTokens !== undefined ? { max_tokens: req.maxTokens } : {}),
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    };
  }

  private estimate(messages: readonly LlmMessage[], text: string): LlmUsage {
    return {
      prompt_tokens: estimateTokens(messageChars(messages)),
      completion_tokens: estimateTokens(text),
      estimated: true,
    };
  }

  private checkImages(messages: readonly LlmMessage[]): void {
    if (!this.acceptsImages && hasImages(messages)) {
      throw new AtlasError('INVALID_REQUEST', `${this.provider} does not accept images (LLM_ACCEPTS_IMAGES)`);
    }
  }

  /** Maps what the openai package threw to an LlmProviderError (429, 5xx, timeout, network, other 4xx). */
  private failure(err: unknown): unknown {
    if (err instanceof LlmProviderError || err instanceof AtlasError) return err;
    if (err instanceof OpenAI.APIConnectionTimeoutError)
      return new LlmProviderError(this.provider, 'timeout', err.message, { cause: err });
    if (err instanceof OpenAI.APIConnectionError)
      return new LlmProviderError(this.provider, 'network', err.message, { cause: err });
    if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
      const status = err.status;
      if (status === 429) {
        const retry = retryAfterSeconds(err.headers);
        return new LlmProviderError(
          this.provider,
          'rate_limited',
          `429 rate limited${retry !== undefined ? ` (retry after ${retry} s)` : ''}`,
          {
            status,
            retryAfterSeconds: retry,
            cause: err,
          },
        );
      }
      const kind = status >= 500 ? 'server_error' : status === 408 ? 'timeout' : 'rejected';
      return new LlmProviderError(this.provider, kind, `${status} ${err.message}`, { status, cause: err });
    }
    if (err instanceof SyntaxError)
      return new LlmProviderError(this.provider, 'malformed_output', `unparsable answer: ${err.message}`, {
        cause: err,
      });
    return new LlmProviderError(this.provider, 'network', err instanceof Error ? err.message : String(err), {
      cause: err,
    });
  }

  /**
   * One call's clock: `arm()` starts (or restarts) the timeout, `disarm()` stops it, `end()` releases it. `failure`
   * returns the caller's abort reason when the caller aborted, a `timeout` error when the clock ran out, else `mapped`.
   */
  private deadline(callerSignal: AbortSignal | undefined) {
    const ctl = new AbortController();
    const onAbort = () => ctl.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', onAbort, { once: true });
    if (callerSignal?.aborted) onAbort();
    let timer: NodeJS.Timeout | undefined;
    const state = {
      signal: ctl.signal,
      timedOut: false,
      arm: () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          state.timedOut = true;
          ctl.abort();
        }, this.timeoutMs);
      },
      disarm: () => clearTimeout(timer),
      end: () => {
        clearTimeout(timer);
        callerSignal?.removeEventListener('abort', onAbort);
        if (!ctl.signal.aborted) ctl.abort(); // a consumer that stopped early: close the connection
      },
      failure: (mapped: unknown): unknown => {
        if (callerSignal?.aborted)
          return callerSignal.reason ?? new DOMException('The operation was aborted', 'AbortError');
        if (state.timedOut)
          return new LlmProviderError(this.provider, 'timeout', `no answer within ${this.timeoutMs} ms`);
        return mapped;
      },
    };
    return state;
  }
}
