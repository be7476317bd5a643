import {
  BarChartIcon,
  ChatBubbleIcon,
  Component1Icon,
  ExitIcon,
  HamburgerMenuIcon,
  HomeIcon,
  Link2Icon,
  MagnifyingGlassIcon,
  MixIcon,
  UploadIcon,
} from '@radix-ui/react-icons';
import { Badge, Box, Flex, IconButton, Separator, Text } from '@radix-ui/themes';
import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { Navigate, NavLink, Outlet, useLocation, useNavigate } from 'react-router';
import { ApiError } from '../api/client';
import { useChannels, useMe } from '../api/hooks';
import { clearKey, readKey } from '../api/key';
import { ErrorState, Loading } from './states';

interface NavItem {
  to: string;
  label: string;
  icon: ReactNode;
  admin?: boolean;
}

const NAV: NavItem[] = [
  { to: '/', label: 'Home', icon: <HomeIcon /> },
  { to: '/ask', label: 'Ask', icon: <ChatBubbleIcon /> },
  { to: '/search', label: 'Search', icon: <MagnifyingGlassIcon /> },
  { to: '/graph', label: 'Graph', icon: <Component1Icon /> },
  { to: '/stats', label: 'Stats', icon: <BarChartIcon /> },
  { to: '/connections', label: 'Connections', icon: <Link2Icon />, admin: true },
  { to: '/import', label: 'Import', icon: <UploadIcon />, admin: true },
  { to: '/contradictions', label: 'Contradictions', icon: <MixIcon />, admin: true },
];

/**
 * The frame of every signed-in screen: a skip link, the navigation (a sidebar; a menu button below 760 px), the
 * channels the caller sees, and the screen (Outlet). Signs the caller in first: GET /api/me answering 401 leads to
 * /sign-in (with the page to come back to).
 */
export const AppShell = () => {
  const me = useMe();
  const channels = useChannels();
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);

  if (me.isPending) return <Loading label="Signing in" />;
  if (me.error instanceof ApiError && me.error.status === 401)
    return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  if (me.error)
    return (
      <Box p="5">
        <ErrorState error={me.error} retry={() => void me.refetch()} />
      </Box>
    );
  const isAdmin = me.data?.role === 'admin';
  const signOut = () => {
    clearKey();
    queryClient.clear();
    navigate('/sign-in');
  };

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Text weight="bold">Atlas</Text>
        <IconButton
          variant="ghost"
          aria-label="Menu"
          aria-expanded={open}
          aria-controls="nav"
          onClick={() => setOpen((o) => !o)}
        >
          <HamburgerMenuIcon />
        </IconButton>
      </header>
      <div className="shell">
        <nav
          id="nav"
          className="shell-nav"
          aria-label="Main"
          data-open={open}
          onClickCapture={(e) => (e.target as HTMLElement).closest('a') && setOpen(false)}
        >
          <Flex direction="column" gap="1">
            <Text size="5" weight="bold" mb="2" as="div">
              Atlas
            </Text>
            {NAV.filter((n) => !n.admin || isAdmin).map((n) => (
              <NavLink key={n.to} to={n.to} end={n.to === '/'} className="nav-link">
                {n.icon}
                {n.label}
              </NavLink>
            ))}
            <Separator size="4" my="2" />
            <Text size="1" color="gray" weight="medium" as="div" mb="1">
              Channels
            </Text>
            {channels.data?.slice(0, 50).map((c) => (
              <NavLink key={c.id} to={`/channels/${encodeURIComponent(c.id)}`} className="nav-link">
                <Text size="2" truncate>
                  #{c.name}
                </Text>
              </NavLink>
            ))}
            {channels.data && channels.data.length > 50 ? (
              <NavLink to="/" className="nav-link">
                <Text size="2" color="gray">
                  all {channels.data.length} channels
                </Text>
              </NavLink>
            ) : null}
            <Separator size="4" my="2" />
            <Flex align="center" gap="2" wrap="wrap">
              <Text size="1" color="gray">
                {me.data?.kind === 'local' ? 'open local access' : me.data?.name}
              </Text>
              <Badge size="1">{me.data?.role}</Badge>
            </Flex>
            {readKey() ? (
              <button type="button" className="nav-link" onClick={signOut} style={{ border: 0, background: 'none' }}>
                <ExitIcon /> Sign out
              </button>
            ) : null}
          </Flex>
        </nav>
        <main id="main" className="shell-main" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </>
  );
};
