import { createBrowserRouter, Navigate, useParams } from 'react-router';
import { AppShell } from './components/layout';
import { NotFound } from './components/states';
import { AskPage } from './pages/ask';
import { ChannelPage, ChannelRedirect } from './pages/channel';
import { ConnectionPage, ConnectionsPage } from './pages/connections';
import { ContradictionsPage } from './pages/contradictions';
import { GraphPage } from './pages/graph';
import { HomePage } from './pages/home';
import { ImportPage } from './pages/import';
import { MemoryRedirect, SearchPage } from './pages/search';
import { SignInPage } from './pages/sign-in';
import { StatsPage } from './pages/stats';

/**
 * `/wiki/{channel_id}/{slug}` (the bot's wiki link, and the server-rendered wiki's addresses): the channel's wiki
 * screen at that page; a slug names its page id (spec "Wiki": `topic/{slug}` is `topic-{slug}`, `topic/{a}/{b}` is
 * `topic-{a}--{b}`, a fixed page's slug is its id).
 */
const WikiLink = () => {
  const { channelId, '*': slug } = useParams();
  const parts = (slug ?? '').split('/').filter(Boolean);
  const page = parts[0] === 'topic' && parts[1] ? `topic-${parts.slice(1).join('--')}` : parts[0];
  return (
    <Navigate
      to={`/channels/${encodeURIComponent(channelId!)}/wiki${page ? `/${encodeURIComponent(page)}` : ''}`}
      replace
    />
  );
};

/**
 * The UI's pages (docs/web.md "Screens"); every path is also served by `atlas start` (routes/web.ts), so a link or a
 * reload opens the same page.
 */
export const router = createBrowserRouter([
  { path: '/sign-in', element: <SignInPage /> },
  {
    element: <AppShell />,
    children: [
      { path: '/', element: <HomePage /> },
      { path: '*', element: <NotFound /> },
      { path: '/wiki/:channelId/*', element: <WikiLink /> },
      // One route for both: the page stays mounted when a first answer moves it to its session's address.
      { path: '/ask/:sessionId?', element: <AskPage /> },
      { path: '/search', element: <SearchPage /> },
      { path: '/connections', element: <ConnectionsPage /> },
      { path: '/connections/:connectionId', element: <ConnectionPage /> },
      { path: '/import', element: <ImportPage /> },
      { path: '/contradictions', element: <ContradictionsPage /> },
      { path: '/graph', element: <GraphPage /> },
      { path: '/memories/:memoryId/:target?', element: <MemoryRedirect /> },
      { path: '/stats', element: <StatsPage /> },
      { path: '/channels/:channelId', element: <ChannelRedirect /> },
      { path: '/channels/:channelId/wiki/:pageId?', element: <ChannelPage /> },
      { path: '/channels/:channelId/:tab', element: <ChannelPage /> },
    ],
  },
]);
