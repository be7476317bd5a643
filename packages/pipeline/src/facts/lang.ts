const SCRIPTS: ReadonlyArray<[string, RegExp]> = [
  ['ja', /[\p{Script=Hiragana}\p{Script=Katakana}]/gu],
  ['zh', /\p{Script=Han}/gu],
  ['ko', /\p{Script=Hangul}/gu],
  ['ru', /\p{Script=Cyrillic}/gu],
  ['ar', /\p{Script=Arabic}/gu],
  ['he', /\p{Script=Hebrew}/gu],
  ['el', /\p{Script=Greek}/gu],
  ['hi', /\p{Script=Devanagari}/gu],
  ['th', /\p{Script=Thai}/gu],
];

const list = (s: string): ReadonlySet<string> => new Set(s.split(' '));
const STOPWORDS: Record<string, ReadonlySet<string>> = {
  en: list('the and is are you that this it with for not have what but was can just how there would should'),
  it: list(
    'il che non per una sono anche della gli questo come ma più ho hai del perché cosa sulle sul quel quella quasi molto poi fare nel nella alla degli delle ancora dopo sempre tutto solo però',
  ),
  pt: list(
    'não que uma com para você isso mais mas tem está muito também então é os das dos pra pro nao voce aqui ainda sobre nossa nosso fazer pode bem',
  ),
  es: list(
    'que los las una por para pero más está como muy también esto tiene hay el es del al pues ya donde cuando porque hacer puede bien sobre',
  ),
  de: list(
    'der die das und ist nicht ich ein eine mit auch auf für aber wie noch sich wir sie es den dem zu bei nur oder wenn dann',
  ),
  fr: list(
    'le les des est une pour pas que qui avec dans mais sur vous je ce il nous sont du au aussi très bien fait comme',
  ),
  nl: list('het een en is niet dat ik je met voor maar ook van op zijn wat nog wel naar bij kan dan heb'),
};

const count = (text: string, re: RegExp): number => text.match(re)?.length ?? 0;

/**
 * Cheap language guess for `source_lang` (spec "Memory": source_lang, a language code); no model.
 * Non-Latin scripts win when they make up a third of the letters (kana → 'ja', Han → 'zh', Hangul → 'ko',
 * Cyrillic → 'ru', …). Latin text is scored against short stop-word lists; English is the default.
 */
export const detectLang = (text: string): string => {
  const letters = count(text, /\p{L}/gu);
  if (letters === 0) return 'en';
  const kana = count(text, SCRIPTS[0]![1]);
  for (const [code, re] of SCRIPTS) {
    const n = code === 'zh' ? count(text, re) + kana : count(text, re);
    if (n / letters >= 1 / 3) return code === 'zh' && kana > 0 ? 'ja' : code;
  }
  return latinLang(text);
};

const latinLang = (text: string): string => {
  const prose = text.replace(/\S*(https?:\/\/|www\.|\.(com|org|io|net|dev)\b)\S*/gi, ' ');
  const words = prose.toLowerCase().match(/\p{L}+/gu) ?? [];
  if (words.length < 4) return 'en';
  const enHits = words.filter((w) => STOPWORDS.en!.has(w)).length;
  let best = 'en';
  let bestHits = enHits;
  for (const [code, set] of Object.entries(STOPWORDS)) {
    let hits = 0;
    for (const w of words) if (set.has(w)) hits++;
    if (hits > bestHits) {
      best = code;
      bestHits = hits;
    }
  }
  return best !== 'en' && bestHits >= 3 && bestHits >= 1.5 * enHits ? best : 'en';
};
