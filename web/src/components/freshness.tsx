import { type Freshness, freshnessText, freshnessTime } from '@atlas/core/freshness';
import { Text, Tooltip } from '@radix-ui/themes';

/** The `freshness` member of a response (ask done, search, wiki page), whichever API types the build has. */
export const freshnessIn = (data: object | null | undefined): Freshness | null =>
  data && 'freshness' in data && data.freshness ? (data.freshness as Freshness) : null;

/**
 * How current an answer, a search or a wiki page is (issue 27 point 3; docs/web.md "Freshness"): the API's
 * `freshness` in a few words in the reader's time zone ("current to 14:02, 3 messages still being read"), amber while
 * projectors are behind; each channel's mark on hover. Nothing when the response has no mark.
 */
export const FreshnessMark = ({ freshness, names }: { freshness?: Freshness | null; names?: Map<string, string> }) => {
  if (!freshness) return null;
  const detail = freshness.channels
    .map(
      (c) =>
        `${names?.get(c.channel_id) ?? c.channel_id}: ${c.newest_message_at ? freshnessTime(c.newest_message_at) : 'no messages'}${c.pending_messages > 0 ? `, ${c.pending_messages} being read` : ''}`,
    )
    .join('\n');
  return (
    <Tooltip content={detail || 'no channel'}>
      <Text size="1" color={freshness.behind ? 'amber' : 'gray'} data-testid="freshness">
        {freshnessText(freshness)}
      </Text>
    </Tooltip>
  );
};
