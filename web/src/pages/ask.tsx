import type { Freshness } from '@atlas/core/freshness';
import { CopyIcon, ReloadIcon, StopIcon, ThickArrowDownIcon, ThickArrowUpIcon, TrashIcon } from '@radix-ui/react-icons';
import {
  Badge,
  Box,
  Button,
  Callout,
  Card,
  Flex,
  Heading,
  IconButton,
  Select,
  Text,
  TextArea,
  Tooltip,
} from '@radix-ui/themes';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type KeyboardEvent, useCallback, useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { type AskCitation, type AskEvent, askStream } from '../api/ask-stream';
import { ApiError, api, unwrap } from '../api/client';
import { formatTime, useChannels, useIsMember } from '../api/hooks';
import { type AsOf, AsOfControl, describeAsOf, parseAsOf } from '../components/as-of';
import { CitationCard } from '../components/citation';
import { FreshnessMark, freshnessIn } from '../components/freshness';
import { Markdown } from '../components/markdown';
import { Empty, ErrorState, Loading } from '../components/states';

/** One turn of the conversation on screen. */
interface Turn {
  question: string;
  answer: string;
  citations: AskCitation[];
  messageId: string | null;
  state: 'streaming' | 'done' | 'stopped' | 'error';
  error: unknown;
  rating: 'up' | 'down' | null;
  /** How current the answer is (the done event's freshness; none for a stored turn). */
  freshness?: Freshness | null;
  /** The date the question was asked as of (`?as_of=` when it was asked; a retry asks as of it again). */
  asOf?: AsOf | null;
}

/** A session's turns from its stored messages (user, then assistant). */
const turnsOf = (messages: { role: string; content: string; citations: AskCitation[]; message_id: string }[]) => {
  const turns: Turn[] = [];
  for (const m of messages) {
    if (m.role === 'user')
      turns.push({
        question: m.content,
        answer: '',
        citations: [],
        messageId: null,
        state: 'done',
        error: null,
        rating: null,
      });
    else if (turns.length)
      Object.assign(turns[turns.length - 1]!, { answer: m.content, citations: m.citations, messageId: m.message_id });
  }
  return turns;
};

/** The day heading a session is grouped under: Today, Yesterday, or the date. */
const dayOf = (iso: string): string => {
  const d = new Date(iso);
  const today = new Date();
  const yesterday = new Date(Date.now() - 86_400_000);
  if (d.toDateString() === today.toDateString()) return 'Today';
  if (d.toDateString() === yesterday.toDateString()) return 'Yesterday';
  return d.toLocaleDateString(undefined, { dateStyle: 'medium' });
};

/**
 * Ask (spec "Ask", "Events / Ask stream"): the answer renders as its tokens arrive, `[n]` markers show their source on
 * hover and focus, the sources are listed; stop, retry, copy; follow-ups continue the session; feedback up or down;
 * an answer without sources says nothing relevant was found; a 429 shows a countdown. Sessions are listed by day
 * (open, continue, delete). `?channel=` asks within one channel (its own routes); `?q=` asks at once; `?as_of=` (a day,
 * read as its end in UTC, or an instant: AsOf; the "As of" control) answers as the knowledge base stood then (the ask
 * body's `as_of`, docs/ask.md "As of a date"), and each answer asked so says so.
 */
export const AskPage = () => {
  const { sessionId } = useParams();
  const [params, setParams] = useSearchParams();
  const channelId = params.get('channel') ?? undefined;
  const asOf = parseAsOf(params.get('as_of'));
  /** The query string the page's own links keep: the channel and the as-of date. */
  const keep = (() => {
    const q = new URLSearchParams();
    if (channelId) q.set('channel', channelId);
    if (asOf) q.set('as_of', asOf.param);
    const t = q.toString();
    return t ? `?${t}` : '';
  })();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const canAsk = useIsMember();
  const channels = useChannels();
  const [turns, setTurns] = useState<Turn[]>([]);
  const [question, setQuestion] = useState('');
  const [mode, setMode] = useState<'quick' | 'deep' | 'summarize'>('deep');
  const abort = useRef<AbortController | null>(null);
  const currentSession = useRef<string | undefined>(undefined); // the session the turns on screen belong to

  const sessions = useQuery({
    queryKey: ['ask-sessions', channelId ?? null],
    queryFn: () =>
      channelId
        ? unwrap(api.GET('/api/channels/{channel_id}/ask/sessions', { params: { path: { channel_id: channelId } } }))
        : unwrap(api.GET('/api/ask/sessions')),
  });
  const session = useQuery({
    queryKey: ['ask-session', channelId ?? null, sessionId],
    enabled: !!sessionId && currentSession.current !== sessionId,
    queryFn: () =>
      channelId
        ? unwrap(
            api.GET('/api/channels/{channel_id}/ask/sessions/{session_id}', {
              params: { path: { channel_id: channelId, session_id: sessionId! } },
            }),
          )
        : unwrap(api.GET('/api/ask/sessions/{session_id}', { params: { path: { session_id: sessionId! } } })),
  });
  useEffect(() => {
    if (session.data) {
      currentSession.current = session.data.session_id;
      setTurns(turnsOf(session.data.messages as never));
    }
  }, [session.data]);
  // "New" (a session's address → /ask) clears the screen; a first mount, or React's StrictMode re-running this effect,
  // has nothing to clear (an ask started by ?q= on mount must keep its turn).
  const shownSession = useRef(sessionId);
  useEffect(() => {
    if (shownSession.current && !sessionId) {
      currentSession.current = undefined;
      setTurns([]);
    }
    shownSession.current = sessionId;
  }, [sessionId]);

  const remove = useMutation({
    mutationFn: (id: string) =>
      channelId
        ? unwrap(
            api.DELETE('/api/channels/{channel_id}/ask/sessions/{session_id}', {
              params: { path: { channel_id: channelId, session_id: id } },
            }),
          )
        : unwrap(api.DELETE('/api/ask/sessions/{session_id}', { params: { path: { session_id: id } } })),
    onSuccess: (_d, id) => {
      void queryClient.invalidateQueries({ queryKey: ['ask-sessions'] });
      if (id === sessionId) navigate(`/ask${keep}`);
    },
  });

  const update = useCallback(
    (i: number, patch: Partial<Turn>) => setTurns((ts) => ts.map((t, j) => (j === i ? { ...t, ...patch } : t))),
    [],
  );

  const run = useCallback(
    async (q: string, index: number, at: AsOf | null) => {
      abort.current?.abort();
      const ctrl = new AbortController();
      abort.current = ctrl;
      let answer = '';
      const citations: AskCitation[] = [];
      const onEvent = (e: AskEvent) => {
        if (e.type === 'token') {
          answer += e.content;
          update(index, { answer, messageId: e.message_id });
        } else if (e.type === 'citation') {
          citations.push(e.citation);
          update(index, { citations: [...citations] });
        } else if (e.type === 'done') {
          update(index, { state: 'done', messageId: e.message_id, freshness: freshnessIn(e) });
          const first = !currentSession.current;
          currentSession.current = e.session_id;
          void queryClient.invalidateQueries({ queryKey: ['ask-sessions'] });
          if (first) navigate(`/ask/${encodeURIComponent(e.session_id)}${keep}`, { replace: true });
        } else if (e.type === 'error') {
          const code = e.code ?? 'INTERNAL_ERROR';
          update(index, {
            state: 'error',
            error: new ApiError(code === 'RATE_LIMIT_EXCEEDED' ? 429 : 500, code, e.error, null, e.retry_after ?? null),
          });
        }
      };
      try {
        await askStream(
          {
            question: q,
            mode,
            ...(currentSession.current ? { session_id: currentSession.current } : {}),
            ...(channelId ? { channelId } : {}),
            ...(at ? { as_of: at.instant } : {}),
          },
          onEvent,
          ctrl.signal,
        );
      } catch (err) {
        if (ctrl.signal.aborted) update(index, { state: 'stopped' });
        else update(index, { state: 'error', error: err });
      }
    },
    [mode, channelId, keep, navigate, queryClient, update],
  );

  const ask = (q: string) => {
    const text = q.trim();
    if (!text) return;
    const index = turns.length;
    setTurns((ts) => [
      ...ts,
      {
        question: text,
        answer: '',
        citations: [],
        messageId: null,
        state: 'streaming',
        error: null,
        rating: null,
        asOf,
      },
    ]);
    setQuestion('');
    void run(text, index, asOf);
  };
  const retry = (i: number) => {
    update(i, { answer: '', citations: [], state: 'streaming', error: null });
    void run(turns[i]!.question, i, turns[i]!.asOf ?? null);
  };

  // ?q= asks at once (the home page's box, "ask about this channel").
  const asked = useRef(false);
  useEffect(() => {
    const q = params.get('q');
    if (q && !asked.current && canAsk) {
      asked.current = true;
      params.delete('q');
      setParams(params, { replace: true });
      ask(q);
    }
  });

  const feedback = async (i: number, rating: 'up' | 'down') => {
    const t = turns[i]!;
    if (!t.messageId || !currentSession.current) return;
    const body = { session_id: currentSession.current, message_id: t.messageId, rating };
    if (channelId)
      await unwrap(
        api.POST('/api/channels/{channel_id}/ask/feedback', { params: { path: { channel_id: channelId } }, body }),
      );
    else await unwrap(api.POST('/api/ask/feedback', { body }));
    update(i, { rating });
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    ask(question);
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      ask(question);
    }
  };
  const streaming = turns.some((t) => t.state === 'streaming');
  const channelName = channels.data?.find((c) => c.id === channelId)?.name;
  const grouped = new Map<string, NonNullable<typeof sessions.data>>();
  for (const s of [...(sessions.data ?? [])].sort((a, b) => b.last_activity.localeCompare(a.last_activity))) {
    const day = dayOf(s.last_activity);
    grouped.set(day, [...(grouped.get(day) ?? []), s]);
  }

  return (
    <div className="facets">
      <aside aria-label="Sessions">
        <Flex justify="between" align="center" mb="2">
          <Heading as="h2" size="3">
            Sessions
          </Heading>
          <Button size="1" variant="soft" asChild>
            <Link to={`/ask${keep}`}>New</Link>
          </Button>
        </Flex>
        {sessions.isPending ? <Loading label="Loading sessions" /> : null}
        {sessions.error ? <ErrorState error={sessions.error} retry={() => void sessions.refetch()} /> : null}
        {sessions.data?.length === 0 ? (
          <Text color="gray" size="2">
            No sessions yet.
          </Text>
        ) : null}
        {[...grouped].map(([day, list]) => (
          <Box key={day} mb="3">
            <Text as="div" size="1" color="gray" weight="medium" mb="1">
              {day}
            </Text>
            {list.map((s) => (
              <Flex key={s.session_id} align="center" justify="between" gap="1">
                <Link
                  to={`/ask/${encodeURIComponent(s.session_id)}${keep}`}
                  aria-current={s.session_id === sessionId ? 'page' : undefined}
                  className="nav-link"
                  style={{ flexGrow: 1, minWidth: 0, flexDirection: 'column', alignItems: 'stretch', gap: 0 }}
                >
                  <Text as="div" size="2" truncate title={s.title ?? undefined}>
                    {s.title ?? 'Untitled session'}
                  </Text>
                  <Text as="div" size="1" color="gray">
                    {new Date(s.last_activity).toLocaleTimeString(undefined, { timeStyle: 'short' })} ·{' '}
                    {s.message_count} messages
                  </Text>
                </Link>
                <IconButton
                  size="1"
                  variant="ghost"
                  color="red"
                  aria-label={`Delete the session “${s.title ?? formatTime(s.created_at)}”`}
                  onClick={() => remove.mutate(s.session_id)}
                >
                  <TrashIcon />
                </IconButton>
              </Flex>
            ))}
          </Box>
        ))}
      </aside>
      <Flex direction="column" gap="4" style={{ minWidth: 0 }}>
        <Heading as="h1" size="6">
          Ask{channelName ? ` about #${channelName}` : ''}
        </Heading>
        {session.isPending && sessionId && currentSession.current !== sessionId ? (
          <Loading label="Loading session" />
        ) : null}
        {session.error ? <ErrorState error={session.error} retry={() => void session.refetch()} /> : null}
        {turns.length === 0 && !sessionId ? (
          <Empty title="Ask what your team knows.">
            Answers quote the facts Atlas holds, each with its source; follow-up questions continue the conversation.
          </Empty>
        ) : null}
        {turns.map((t, i) => (
          <AnswerCard
            // biome-ignore lint/suspicious/noArrayIndexKey: turns are appended, never reordered
            key={i}
            turn={t}
            onRetry={() => retry(i)}
            onStop={() => abort.current?.abort()}
            onFeedback={(r) => void feedback(i, r)}
          />
        ))}
        {canAsk ? (
          <form onSubmit={submit} aria-label="Ask">
            <Flex direction="column" gap="2">
              <TextArea
                aria-label="Question"
                placeholder={turns.length ? 'Ask a follow-up…' : 'Why did the team move to an external NFS?'}
                value={question}
                onChange={(e) => setQuestion(e.target.value)}
                onKeyDown={onKey}
                maxLength={2000}
                rows={2}
              />
              <Flex gap="2" align="center" justify="end" wrap="wrap">
                <AsOfControl
                  value={asOf}
                  onChange={(d) =>
                    setParams(
                      (p) => {
                        if (d) p.set('as_of', d);
                        else p.delete('as_of');
                        return p;
                      },
                      { replace: true },
                    )
                  }
                />
                <Select.Root value={mode} onValueChange={(v) => setMode(v as typeof mode)}>
                  <Select.Trigger aria-label="Mode" variant="soft" />
                  <Select.Content>
                    <Select.Item value="quick">Quick</Select.Item>
                    <Select.Item value="deep">Deep</Select.Item>
                    <Select.Item value="summarize">Summarize</Select.Item>
                  </Select.Content>
                </Select.Root>
                <Button type="submit" disabled={streaming || !question.trim()}>
                  Ask
                </Button>
              </Flex>
            </Flex>
          </form>
        ) : (
          <Callout.Root color="gray">
            <Callout.Text>This key can read but not ask (the member role asks).</Callout.Text>
          </Callout.Root>
        )}
      </Flex>
    </div>
  );
};

/** One question and its answer: streamed text with citation markers, sources, actions and state. */
const AnswerCard = ({
  turn: t,
  onRetry,
  onStop,
  onFeedback,
}: {
  turn: Turn;
  onRetry: () => void;
  onStop: () => void;
  onFeedback: (r: 'up' | 'down') => void;
}) => {
  const [copied, setCopied] = useState(false);
  const nothing = t.state === 'done' && t.citations.length === 0 && t.answer.length > 0;
  return (
    <Card size="2" asChild>
      <article aria-busy={t.state === 'streaming'}>
        <Flex direction="column" gap="3">
          <Text weight="bold">{t.question}</Text>
          {t.asOf ? (
            <Text size="1" color="gray" data-testid="answer-as-of">
              As of {describeAsOf(t.asOf)}: only what was said by then, valid as it stood then.
            </Text>
          ) : null}
          {nothing ? (
            <Callout.Root color="amber" data-testid="nothing-found">
              <Callout.Text>Nothing relevant found in the knowledge base.</Callout.Text>
            </Callout.Root>
          ) : null}
          {t.answer ? (
            <div aria-live="polite" data-testid="answer">
              <Markdown content={t.answer} citations={t.citations} />
            </div>
          ) : t.state === 'streaming' ? (
            <Loading label="Finding sources" lines={2} />
          ) : null}
          {t.state === 'error' ? <ErrorState error={t.error} retry={onRetry} /> : null}
          {t.state === 'stopped' ? <Text color="gray">Stopped.</Text> : null}
          {t.state === 'done' ? <FreshnessMark freshness={t.freshness} /> : null}
          {t.citations.length ? (
            <details>
              <summary>
                <Text size="2" weight="medium">
                  Sources ({t.citations.length})
                </Text>
              </summary>
              <Flex direction="column" gap="3" mt="2" asChild>
                <ol style={{ paddingLeft: 0, listStyle: 'none' }}>
                  {t.citations.map((c) => (
                    <li key={c.id}>
                      <Flex gap="2">
                        <Badge variant="soft">{c.id}</Badge>
                        <CitationCard c={c} />
                      </Flex>
                    </li>
                  ))}
                </ol>
              </Flex>
            </details>
          ) : null}
          <Flex gap="2" align="center">
            {t.state === 'streaming' ? (
              <Button size="1" variant="soft" color="gray" onClick={onStop}>
                <StopIcon /> Stop
              </Button>
            ) : (
              <>
                {t.state === 'error' ? null : ( // an error has its own Retry, held while a 429 counts down
                  <Tooltip content="Ask again">
                    <IconButton size="1" variant="ghost" aria-label="Retry" onClick={onRetry}>
                      <ReloadIcon />
                    </IconButton>
                  </Tooltip>
                )}
                <Tooltip content={copied ? 'Copied' : 'Copy the answer'}>
                  <IconButton
                    size="1"
                    variant="ghost"
                    aria-label="Copy the answer"
                    disabled={!t.answer}
                    onClick={() => void navigator.clipboard?.writeText(t.answer).then(() => setCopied(true))}
                  >
                    <CopyIcon />
                  </IconButton>
                </Tooltip>
                {t.messageId && t.state === 'done' ? (
                  <>
                    <IconButton
                      size="1"
                      variant={t.rating === 'up' ? 'solid' : 'ghost'}
                      aria-label="Helpful"
                      aria-pressed={t.rating === 'up'}
                      onClick={() => onFeedback('up')}
                    >
                      <ThickArrowUpIcon />
                    </IconButton>
                    <IconButton
                      size="1"
                      variant={t.rating === 'down' ? 'solid' : 'ghost'}
                      aria-label="Not helpful"
                      aria-pressed={t.rating === 'down'}
                      onClick={() => onFeedback('down')}
                    >
                      <ThickArrowDownIcon />
                    </IconButton>
                  </>
                ) : null}
              </>
            )}
          </Flex>
        </Flex>
      </article>
    </Card>
  );
};
