import path from 'node:path';
import { OfflineFactExtractor } from '@atlas/pipeline';
import { loadLocomo } from '../bench/locomo.js';

const set = loadLocomo(path.resolve(import.meta.dirname, '../../../shared/data/locomo/locomo-dev.json'));
const ex = new OfflineFactExtractor();
for (const m of set.messages.slice(0, 12)) {
  console.log('MSG', m.author.name, '|', m.text.slice(0, 150));
  for (const f of ex.extractSync({ message: m, thread: null })) console.log('   ', f.qualityScore, f.memoryText);
}
