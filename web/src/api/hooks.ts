import { useQuery } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { api, unwrap } from './client';

/** The caller (GET /api/me): its role decides which admin controls are shown; 401 means sign in. */
export const useMe = () =>
  useQuery({ queryKey: ['me'], queryFn: () => unwrap(api.GET('/api/me')), retry: false, staleTime: 60_000 });

/** Whether the caller is an admin (connections, keys, settings, regenerate, re-drive). */
export const useIsAdmin = (): boolean => useMe().data?.role === 'admin';

/** Whether the caller may ask and trigger syncs (member or admin). */
export const useIsMember = (): boolean => {
  const role = useMe().data?.role;
  return role === 'member' || role === 'admin';
};

/** The channels the caller can see (GET /api/channels). */
export const useChannels = () => useQuery({ queryKey: ['channels'], queryFn: () => unwrap(api.GET('/api/channels')) });

/** A time as the reader's locale shows it ("28 Nov 2026, 14:02"); `—` for none. */
export const formatTime = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—';

/** A count with thousands separators. */
export const formatCount = (n: number | null | undefined): string => (n ?? 0).toLocaleString();

/** Whether a CSS media query matches now, updated as the window changes (`useMediaQuery('(min-width: 761px)')`). */
export const useMediaQuery = (query: string): boolean =>
  useSyncExternalStore(
    (notify) => {
      const m = window.matchMedia(query);
      m.addEventListener('change', notify);
      return () => m.removeEventListener('change', notify);
    },
    () => window.matchMedia(query).matches,
  );

/** Wide enough for side panels (above the 760 px breakpoint of app.css). */
export const useWide = (): boolean => useMediaQuery('(min-width: 761px)');
