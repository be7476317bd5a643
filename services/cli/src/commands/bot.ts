import type { Config } from '@atlas/core';
import { startBotService } from '@atlas/runtime/bot';

/**
 * `atlas run bot`: the bot alone until SIGINT/SIGTERM (`startBotService` of `@atlas/runtime/bot`). It opens no
 * database and takes no data dir lock: it talks to the backend over HTTP (ATLAS_API_URL) and keeps its state in the
 * cache/queue store (REDIS_URL or in process).
 */
export const runBot = async (cfg: Config): Promise<void> => {
  const bot = await startBotService(cfg);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await bot.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
};
