import nlp from 'compromise';

/**
 * Word lists of the offline extractor. compromise is used only as a dictionary (its ~25k-word lexicon of
 * part-of-speech tags): running its tagger on every sentence costs ~0.8 ms, too slow for the 1,000 msg/s target.
 */
const LEX = (nlp.world() as { model: { one: { lexicon: Record<string, string | string[] | undefined> } } }).model.one
  .lexicon;

/** The compromise lexicon tags of a lowercase word, joined by commas ('' when unknown). */
export const lexTag = (word: string): string => {
  const t = LEX[word];
  return Array.isArray(t) ? t.join(',') : (t ?? '');
};

const NOT_NOUN =
  /Infinitive|PresentTense|PastTense|Gerund|Participle|Adjective|Adverb|Comparative|Superlative|Preposition|Conjunction|Determiner|Pronoun|Expression|Modal|Copula|Auxiliary|QuestionWord/;

/** True when a lowercase word can head a noun phrase (unknown words count: chat jargon is mostly nouns). */
export const isNounish = (word: string): boolean => !NOT_NOUN.test(lexTag(word)) && !STOPWORDS.has(word);

/** True for first names and person/organisation names compromise knows. */
export const isNameWord = (word: string): boolean => /Name|Person|Organization/.test(lexTag(word));

/** The set of the whitespace-separated words of `s` (a word list written as one string). */
export const wordSet = (s: string): ReadonlySet<string> => new Set(s.trim().split(/\s+/));

export const STOPWORDS = wordSet(`
a about above after again against all also am an and any anyone anything are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each either
else even ever every few for from further get gets got had hadn't has hasn't have haven't having he he's her here hers
herself him himself his how i i'd i'll i'm i've if in into is isn't it it's its itself just let let's like me might more
most much must my myself no nor not now of off on once only or other our ours ourselves out over own really same she
should shouldn't so some such than that that's the their theirs them themselves then there there's these they they'd
they'll they're they've this those though through to too under until up upon us very was wasn't we we'd we'll we're
we've were weren't what what's when where which while who whom why will with won't would wouldn't yet you you'd you'll
you're you've your yours yourself yourselves yes yeah yep yup ok okay oh hmm hm well still maybe perhaps probably
actually basically anyway anyways btw imo imho tbh fyi lol haha hehe also already always never sometimes usually
one two something someone somebody anybody nothing everything everyone thing things stuff way ways lot lots bit kind
sort etc e.g i.e vs via per want wants need needs try trying tried use using used make makes made see seems seem look
looks know knows think thought sure thanks thank please sorry hi hey hello guys folks all`);

/** Nouns too general to be a topic tag. */
export const GENERIC_NOUNS = wordSet(`
thing things stuff way ways lot lots time times people person guy guys folks question questions problem problems issue
issues idea ideas example examples case cases point part parts place reason end start day days week weeks year years
today tomorrow yesterday moment minute minutes hour hours help answer answers info information sense fact work job
number numbers side option options version versions value values result results name names line lines word words
channel channels message messages hint tip tips thread link links doc docs team everyone anyone someone`);

/** Chit-chat words: a sentence made only of these (and stop words) carries no fact. */
export const CHITCHAT = wordSet(`
hi hey hello hiya yo gm gn morning evening night welcome thanks thank thx ty tyvm cheers appreciated appreciate
lol lmao rofl haha hahaha hehe heh wow woah whoa oops ouch yay ugh meh nice cool great awesome amazing excellent
perfect good fine ok okay k kk yes yeah yep yup yea no nope nah sure right indeed exactly agreed true correct
+1 np congrats congratulations bye cya later soon sorry oh ah aha hmm hm huh interesting neat sweet wicked lovely
glad happy love fun funny hope help helps helped much lot all everyone guys folks man dude mate sir bud buddy
again too very so really totally definitely absolutely works worked working makes sense see got it that this
you your me i we us one done will do try does did ah ahh same here then well`);

/**
 * Technologies and projects: lowercase form → display name. In the list, `_` stands for a space, `raw:Display`
 * renames, and a leading `!` marks an ordinary English word (go, ring, boot) that counts only when capitalised.
 */
const TECH_LIST = `Clojure ClojureScript cljs:ClojureScript clj:Clojure Java JVM JavaScript js:JavaScript TypeScript !Node
  node.js:Node.js npm yarn Python Ruby Rust !Go Scala Kotlin Haskell Elixir Erlang C++ Lisp !Scheme Racket Common_Lisp
  Emacs Vim Neovim Spacemacs IntelliJ Cursive CIDER nREPL REPL Leiningen lein:Leiningen !Boot Figwheel shadow-cljs
  deps.edn tools.deps core.async core.logic core.match clojure.spec test.check Reagent re-frame !Rum !Om Fulcro Reitit
  !Ring Compojure Pedestal Luminus !Duct Integrant !Mount Datomic Datascript Specter Onyx Hoplon !Garden Parinfer
  Paredit Lumo Planck Clojars Maven Gradle Docker Kubernetes k8s:Kubernetes AWS !Lambda S3 EC2 Heroku GCP Azure
  Postgres PostgreSQL MySQL SQLite MongoDB Redis Kafka RabbitMQ Elasticsearch Cassandra DynamoDB GraphQL HTTP JSON
  EDN !Transit XML YAML SQL JDBC Git GitHub GitLab Linux macOS Ubuntu React ReactJS:React React_Native Webpack Babel
  !Closure Google_Closure Electron Chrome Firefox WebSocket OAuth JWT CORS Iceberg !Spark Flink Hadoop Parquet !Glue
  EMR Athena Trino Presto Snowflake BigQuery Debezium OLake Airflow Ethereum Solidity Web3 EVM Coinbase OpenAI
  Anthropic Gemini GPT LLM Ollama Groq Eliza ElizaOS Supabase Next.js Vercel Hardhat Metamask IPFS`;

/** A technology name; `capitalOnly` when its lowercase form is an ordinary word. */
export interface Tech {
  name: string;
  capitalOnly: boolean;
}

export const TECH: ReadonlyMap<string, Tech> = new Map(
  TECH_LIST.trim()
    .split(/\s+/)
    .map((entry): [string, Tech] => {
      const capitalOnly = entry.startsWith('!');
      const [raw = '', display] = entry.replace(/^!/, '').split(':');
      return [raw.toLowerCase().replaceAll('_', ' '), { name: (display ?? raw).replaceAll('_', ' '), capitalOnly }];
    }),
);

/** Words that turn a statement into a guess: they lower the quality score. */
export const HEDGES =
  /\b(maybe|might|perhaps|possibly|not sure|i guess|i suppose|i wonder|wondering|dunno|don'?t know|no idea|probably|i'?m not sure|not certain|could be|seems like|kind of|sort of|afaik|iirc)\b/i;

/** Signals of high importance whatever the fact type: breaking changes, security, outages, deprecations. */
export const HIGH_IMPACT =
  /\b(breaking changes?|breaks? (backwards )?compat\w*|security (fix|issue|hole|patch|advisory)|vulnerabilit(y|ies)|cve-\d+|exploit|outage|data loss|incident|deprecated|deprecation|end of life)\b/i;
