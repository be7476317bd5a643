import { createBrowserRouter } from 'react-router';
import { AppShell } from './components/layout';
import { NotFound } from './components/states';
import { AskPage } from './pages/ask';
import { HomePage } from './pages/home';
import { MemoryRedirect, SearchPage } from './pages/search';
import { SignInPage } from './pages/sign-in';

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
      { path: '/ask', element: <AskPage /> },
      { path: '/ask/:sessionId', element: <AskPage /> },
      { path: '/search', element: <SearchPage /> },
      { path: '/memories/:memoryId/:target?', element: <MemoryRedirect /> },
    ],
  },
]);
