import { Box, Button, Callout, Card, Checkbox, Flex, Heading, Text, TextField } from '@radix-ui/themes';
import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { ApiError } from '../api/client';
import { clearKey, storeKey } from '../api/key';

/**
 * Sign-in (docs/web.md): an API key (docs/access.md "API keys"), checked with GET /api/me before it is kept; on the
 * open loopback default no key is needed and this page is only seen after signing out.
 */
export const SignInPage = () => {
  const [key, setKey] = useState('');
  const [remember, setRemember] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const queryClient = useQueryClient();
  const next = params.get('next');
  const target = next?.startsWith('/') && !next.startsWith('//') ? next : '/';

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const res = await fetch('/api/me', { headers: key ? { authorization: `Bearer ${key.trim()}` } : {} });
      if (!res.ok) {
        const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
        throw new ApiError(res.status, 'UNAUTHORIZED', body?.error?.message ?? `${res.status} ${res.statusText}`);
      }
      if (key.trim()) storeKey(key.trim(), remember);
      else clearKey();
      queryClient.clear();
      navigate(target, { replace: true });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Flex justify="center" align="center" p="4" style={{ minHeight: '100%' }}>
      <main style={{ width: '100%', maxWidth: 420 }}>
        <Card size="3">
          <form onSubmit={submit}>
            <Flex direction="column" gap="3">
              <Heading as="h1" size="6">
                Sign in to Atlas
              </Heading>
              <Text size="2" color="gray">
                Paste an API key (an admin creates one with <code>atlas keys create</code>). On a server open to local
                callers, leave it empty.
              </Text>
              <Box>
                <Text as="label" htmlFor="api-key" size="2" weight="medium" mb="1" style={{ display: 'block' }}>
                  API key
                </Text>
                <TextField.Root
                  id="api-key"
                  type="password"
                  autoComplete="off"
                  value={key}
                  onChange={(e) => setKey(e.target.value)}
                  placeholder="atlas_…"
                />
              </Box>
              <Text as="label" size="2">
                <Flex gap="2" align="center">
                  <Checkbox checked={remember} onCheckedChange={(v) => setRemember(v === true)} />
                  Remember on this device
                </Flex>
              </Text>
              {error ? (
                <Callout.Root color="red" role="alert">
                  <Callout.Text>{error}</Callout.Text>
                </Callout.Root>
              ) : null}
              <Button type="submit" loading={busy}>
                Sign in
              </Button>
            </Flex>
          </form>
        </Card>
      </main>
    </Flex>
  );
};
