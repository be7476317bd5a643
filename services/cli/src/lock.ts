import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { AtlasError } from '@atlas/core';

export interface LockInfo {
  pid: number;
  command: string;
  port?: number | undefined;
  startedAt: string;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export const lockPath = (dataDir: string): string => path.join(dataDir, 'atlas.lock');

/** The live holder of a data dir's lock, or null (a stale lock of a dead process counts as none). */
export const readLock = (dataDir: string): LockInfo | null => {
  try {
    const info = JSON.parse(readFileSync(lockPath(dataDir), 'utf8')) as LockInfo;
    return alive(info.pid) ? info : null;
  } catch {
    return null;
  }
};

/**
 * Takes the data dir's lock: the embedded database (PGlite) may be opened by one process at a time.
 * Throws AtlasError DATA_DIR_LOCKED naming the holder. Returns the release function.
 */
export const acquireLock = (dataDir: string, info: Omit<LockInfo, 'pid' | 'startedAt'>): (() => void) => {
  mkdirSync(dataDir, { recursive: true });
  const file = lockPath(dataDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, JSON.stringify({ ...info, pid: process.pid, startedAt: new Date().toISOString() }));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = readLock(dataDir);
      if (holder) {
        const where = holder.port ? ` serving port ${holder.port}` : '';
        throw new AtlasError(
          'DATA_DIR_LOCKED',
          `the data dir ${dataDir} is in use by 'atlas ${holder.command}' (pid ${holder.pid}${where}). ` +
            'The embedded database allows one process at a time: stop that process and run this again, ' +
            'or set DATABASE_URL to a PostgreSQL server, where import and start can run side by side.',
          { details: { ...holder } },
        );
      }
      rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  throw new AtlasError('DATA_DIR_LOCKED', `could not lock ${dataDir}`);
};
