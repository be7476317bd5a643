import { Badge, Box, Button, Card, Flex, Grid, Heading, Link as RLink, Table, Text, TextField } from '@radix-ui/themes';
import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { formatCount, formatTime, useChannels, useIsAdmin } from '../api/hooks';
import { Empty, QueryView } from '../components/states';

/**
 * Home: on an empty instance, how to start (import an export in the browser, or connect a platform; admins), else the
 * totals, a question box and every visible channel with its counts, last sync and a link to its workspace.
 */
export const HomePage = () => {
  const channels = useChannels();
  const stats = useQuery({ queryKey: ['stats'], queryFn: () => unwrap(api.GET('/api/stats')) });
  const isAdmin = useIsAdmin();
  const navigate = useNavigate();
  const [q, setQ] = useState('');
  const ask = (e: FormEvent) => {
    e.preventDefault();
    if (q.trim()) navigate(`/ask?q=${encodeURIComponent(q.trim())}`);
  };

  return (
    <Flex direction="column" gap="5">
      <Heading as="h1" size="7">
        Atlas
      </Heading>
      <QueryView query={channels} label="Loading channels">
        {(list) =>
          list.length === 0 ? (
            <Card size="3">
              <Flex direction="column" gap="3">
                <Heading as="h2" size="5">
                  Nothing here yet
                </Heading>
                <Text>
                  Atlas turns chat history into a knowledge base: facts with their sources, a wiki per channel, search,
                  a knowledge graph and answers with citations. Start by bringing in some history.
                </Text>
                {isAdmin ? (
                  <Flex gap="3" wrap="wrap">
                    <Button asChild>
                      <Link to="/import">Import an export</Link>
                    </Button>
                    <Button asChild variant="soft">
                      <Link to="/connections">Connect a platform</Link>
                    </Button>
                  </Flex>
                ) : (
                  <Text color="gray">Ask an admin to import an export or connect a workspace.</Text>
                )}
                <Text size="2" color="gray">
                  From a shell: <code>npx atlas import path/to/slack-export</code> (a Slack export folder or .zip, or a
                  DiscordChatExporter JSON).
                </Text>
              </Flex>
            </Card>
          ) : (
            <>
              <form onSubmit={ask} aria-label="Ask a question">
                <Flex gap="2">
                  <Box flexGrow="1">
                    <TextField.Root
                      size="3"
                      aria-label="Question"
                      placeholder="Ask what your team decided…"
                      value={q}
                      onChange={(e) => setQ(e.target.value)}
                    />
                  </Box>
                  <Button size="3" type="submit">
                    Ask
                  </Button>
                </Flex>
              </form>
              {stats.data ? (
                <Grid columns={{ initial: '2', sm: '4' }} gap="3">
                  {(
                    [
                      ['Channels', stats.data.total_channels],
                      ['Messages', stats.data.total_messages],
                      ['Facts', stats.data.total_facts],
                      ['Decisions', stats.data.total_decisions],
                    ] as const
                  ).map(([label, n]) => (
                    <Card key={label}>
                      <Text as="div" size="1" color="gray">
                        {label}
                      </Text>
                      <Text as="div" size="6" weight="bold">
                        {formatCount(n)}
                      </Text>
                    </Card>
                  ))}
                </Grid>
              ) : null}
              <Box>
                <Heading as="h2" size="4" mb="2">
                  Channels
                </Heading>
                {list.length === 0 ? <Empty title="No channel is visible to this key." /> : null}
                <Table.Root variant="surface" size="1">
                  <Table.Header>
                    <Table.Row>
                      <Table.ColumnHeaderCell>Channel</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell className="wide-only">Platform</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Messages</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Facts</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell className="wide-only">Last sync</Table.ColumnHeaderCell>
                    </Table.Row>
                  </Table.Header>
                  <Table.Body>
                    {list.map((c) => (
                      <Table.Row key={c.id}>
                        <Table.RowHeaderCell>
                          <RLink asChild>
                            <Link to={`/channels/${encodeURIComponent(c.id)}`}>#{c.name}</Link>
                          </RLink>
                        </Table.RowHeaderCell>
                        <Table.Cell className="wide-only">
                          <Badge color={c.platform === 'platform_a' ? 'indigo' : 'violet'}>
                            {c.platform === 'platform_a' ? 'Slack-like' : 'Discord-like'}
                          </Badge>
                        </Table.Cell>
                        <Table.Cell justify="end">{formatCount(c.message_count)}</Table.Cell>
                        <Table.Cell justify="end">{formatCount(c.fact_count)}</Table.Cell>
                        <Table.Cell className="wide-only">
                          {c.last_sync ? formatTime(c.last_sync) : 'imported'}
                        </Table.Cell>
                      </Table.Row>
                    ))}
                  </Table.Body>
                </Table.Root>
              </Box>
            </>
          )
        }
      </QueryView>
    </Flex>
  );
};
