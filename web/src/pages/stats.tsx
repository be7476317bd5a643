import { DownloadIcon } from '@radix-ui/react-icons';
import { Box, Button, Flex, Heading, Tabs, Text } from '@radix-ui/themes';
import { useMutation } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, errorOf } from '../api/client';
import { useIsAdmin } from '../api/hooks';
import { ErrorState } from '../components/states';
import { ActivityCharts } from './stats/activity';
import { DeadLetters } from './stats/dead-letters';
import { HealthPanel } from './stats/health';
import { Overview } from './stats/overview';
import { TopCharts } from './stats/top';

const TABS = [
  { value: 'overview', label: 'Overview' },
  { value: 'activity', label: '7/30 days' },
  { value: 'top', label: 'Top' },
  { value: 'health', label: 'Health' },
  { value: 'dead-letters', label: 'Dead letters', admin: true },
] as const;
type Tab = (typeof TABS)[number]['value'];

/**
 * Downloads the stats export (GET /api/stats/export?format=json|csv: one row per visible channel, JSON with totals)
 * with the caller's key, saved under the server's file name (Content-Disposition).
 */
const useExport = () =>
  useMutation({
    mutationFn: async (format: 'json' | 'csv') => {
      const r = await api.GET('/api/stats/export', { params: { query: { format } }, parseAs: 'blob' });
      if (!r.response.ok) throw await errorOf(r.response);
      const name =
        /filename="([^"]+)"/.exec(r.response.headers.get('content-disposition') ?? '')?.[1] ?? `atlas-stats.${format}`;
      const url = URL.createObjectURL(r.data as Blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      return name;
    },
  });

/**
 * Stats and operations (issue 26 point 8; spec "Stats and health"): tabs (the `tab` query parameter) for the overview
 * (totals, quality bands, activity feed), 7- and 30-day activity, top authors and topics, dependency health with
 * consumer lag per projector, and, for admins only, the dead letters with re-drive; the JSON and CSV export in the
 * header. A reader never sees the admin tab (and the server refuses its routes anyway).
 */
export const StatsPage = () => {
  const isAdmin = useIsAdmin();
  const [params, setParams] = useSearchParams();
  const tabs = TABS.filter((t) => !('admin' in t) || isAdmin);
  const asked = params.get('tab');
  const tab: Tab = tabs.find((t) => t.value === asked)?.value ?? 'overview';
  const setTab = (v: string) => setParams(v === 'overview' ? {} : { tab: v });
  const exporter = useExport();

  return (
    <Flex direction="column" gap="4">
      <Flex justify="between" align="center" gap="3" wrap="wrap">
        <Heading as="h1" size="7">
          Stats and operations
        </Heading>
        <Flex gap="2" wrap="wrap" align="center">
          <Button
            variant="soft"
            onClick={() => exporter.mutate('json')}
            loading={exporter.isPending && exporter.variables === 'json'}
          >
            <DownloadIcon /> Export JSON
          </Button>
          <Button
            variant="soft"
            onClick={() => exporter.mutate('csv')}
            loading={exporter.isPending && exporter.variables === 'csv'}
          >
            <DownloadIcon /> Export CSV
          </Button>
        </Flex>
      </Flex>
      {exporter.error ? <ErrorState error={exporter.error} /> : null}
      {exporter.data && !exporter.isPending ? (
        <Text size="1" color="gray" role="status">
          Saved {exporter.data}.
        </Text>
      ) : null}
      <Tabs.Root value={tab} onValueChange={setTab}>
        <Tabs.List aria-label="Stats sections" wrap="wrap">
          {tabs.map((t) => (
            <Tabs.Trigger key={t.value} value={t.value}>
              {t.label}
            </Tabs.Trigger>
          ))}
        </Tabs.List>
        <Box pt="4">
          <Tabs.Content value="overview">
            <Overview />
          </Tabs.Content>
          <Tabs.Content value="activity">
            <ActivityCharts />
          </Tabs.Content>
          <Tabs.Content value="top">
            <TopCharts />
          </Tabs.Content>
          <Tabs.Content value="health">
            <HealthPanel />
          </Tabs.Content>
          {isAdmin ? (
            <Tabs.Content value="dead-letters">
              <DeadLetters />
            </Tabs.Content>
          ) : null}
        </Box>
      </Tabs.Root>
    </Flex>
  );
};
