#!/usr/bin/env node
// The `atlas` command: loads the TypeScript sources through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../services/cli/src/main.ts');
