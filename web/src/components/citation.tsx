import { ExternalLinkIcon } from '@radix-ui/react-icons';
import { Flex, HoverCard, Link, Text } from '@radix-ui/themes';
import { formatTime } from '../api/hooks';

/** What a citation shows: ask citations and wiki citations share these fields (spec "Ask citation", "Wiki citation"). */
export interface CitationLike {
  id: string;
  author: string;
  channel: string;
  timestamp: string;
  text_excerpt: string;
  permalink: string;
  media_type?: string | null;
  media_name?: string | null;
}

/** The permalink when it is an http(s) address (never a javascript: or data: one from stored text). */
export const safeHref = (url: string | null | undefined): string | undefined =>
  url && /^https?:\/\//i.test(url) ? url : undefined;

/** The card of one source: author, channel, time, excerpt, media and the permalink. */
export const CitationCard = ({ c }: { c: CitationLike }) => (
  <Flex direction="column" gap="1" style={{ maxWidth: 360 }}>
    <Text size="2" weight="bold">
      {c.author} <Text color="gray">in #{c.channel.replace(/^#/, '')}</Text>
    </Text>
    <Text size="1" color="gray">
      {formatTime(c.timestamp)}
    </Text>
    <Text size="2">{c.text_excerpt}</Text>
    {c.media_name ? (
      <Text size="1" color="gray">
        {c.media_type}: {c.media_name}
      </Text>
    ) : null}
    {safeHref(c.permalink) ? (
      <Link size="2" href={safeHref(c.permalink)} target="_blank" rel="noopener noreferrer">
        Open the message <ExternalLinkIcon />
      </Link>
    ) : null}
  </Flex>
);

/**
 * A `[n]` marker in an answer or a wiki page: a button that shows its source's card on hover and on keyboard focus,
 * and opens the permalink on click. A marker without a citation stays plain text.
 */
export const CitationMarker = ({ label, citation }: { label: string; citation: CitationLike | undefined }) => {
  if (!citation) return <span>{label}</span>;
  const href = safeHref(citation.permalink);
  return (
    <HoverCard.Root openDelay={150}>
      <HoverCard.Trigger>
        <a
          className="cite"
          href={href ?? '#'}
          target="_blank"
          rel="noopener noreferrer"
          aria-label={`Source ${label}: ${citation.author}`}
          data-citation={citation.id}
        >
          {label}
        </a>
      </HoverCard.Trigger>
      <HoverCard.Content size="1" data-testid="citation-card">
        <CitationCard c={citation} />
      </HoverCard.Content>
    </HoverCard.Root>
  );
};
