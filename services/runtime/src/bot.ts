import { apiLoggerOptions } from '@atlas/api';
import { backendUrlOf, type RunningBot, startBot } from '@atlas/bot';
import type { Config } from '@atlas/core';

/** Whether `atlas start` runs the bot too: a platform's signing secret or public key is configured. */
export const botConfigured = (cfg: Config): boolean =>
  Boolean(cfg.PLATFORM_A_SIGNING_SECRET || cfg.PLATFORM_B_PUBLIC_KEY);

/**
 * Starts the chat bot on BOT_PORT (services/bot, startBot) with the API's JSON logger and prints one ready line:
 * its address, its cache/queue store (redis or memory) and the backend it calls. It opens no database: the bot talks
 * to the backend over HTTP (ATLAS_API_URL) and keeps its state in the cache/queue store (REDIS_URL or in process).
 * `@atlas/runtime/bot` loads this module alone (`atlas run bot`: neither the stores nor the projectors).
 */
export const startBotService = async (cfg: Config): Promise<RunningBot> => {
  const bot = await startBot(cfg, { fastify: { logger: apiLoggerOptions(cfg.LOG_LEVEL) } });
  console.log(
    `Atlas bot is serving ${bot.url} (cache/queue store: ${bot.store.kind}; backend ${backendUrlOf(cfg)}; ` +
      `platform_a ${cfg.PLATFORM_A_SIGNING_SECRET ? 'on' : 'off'}, platform_b ${cfg.PLATFORM_B_PUBLIC_KEY ? 'on' : 'off'})`,
  );
  return bot;
};
