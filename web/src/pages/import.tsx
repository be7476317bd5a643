import { UploadIcon } from '@radix-ui/react-icons';
import { Badge, Box, Button, Card, Flex, Heading, Progress, Table, Text } from '@radix-ui/themes';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type DragEvent, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { ApiError, api, errorOf, unwrap } from '../api/client';
import { formatCount, formatTime, useIsAdmin } from '../api/hooks';
import { readKey } from '../api/key';
import { Empty, ErrorState } from '../components/states';

/** An import job as `GET /api/imports/{import_id}` answers it (docs/import.md "Importing from the browser"). */
type ImportJob = Awaited<ReturnType<typeof getJob>>;
const getJob = (id: string) => unwrap(api.GET('/api/imports/{import_id}', { params: { path: { import_id: id } } }));

/**
 * Uploads `file` as `POST /api/imports` (multipart, field `file`) with upload progress (XMLHttpRequest: fetch reports
 * none), resolving with the accepted job; a refusal rejects with its ApiError (the shared error body: a bad file, a
 * size over the bound, a non-admin key).
 */
const upload = (file: File, onProgress: (sent: number, total: number) => void): Promise<ImportJob> =>
  new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/imports');
    const key = readKey();
    if (key) xhr.setRequestHeader('authorization', `Bearer ${key}`);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.total);
    xhr.onload = async () => {
      const res = new Response(xhr.responseText, {
        status: xhr.status,
        headers: { 'content-type': xhr.getResponseHeader('content-type') ?? 'application/json' },
      });
      if (xhr.status >= 200 && xhr.status < 300) resolve(JSON.parse(xhr.responseText) as ImportJob);
      else reject(await errorOf(res));
    };
    xhr.onerror = () => reject(new ApiError(0, 'NETWORK_ERROR', 'the upload could not reach Atlas'));
    const form = new FormData();
    form.append('file', file);
    xhr.send(form);
  });

const DONE = new Set(['completed', 'failed']);

/**
 * Import (admins; docs/import.md): a Slack export `.zip` or a DiscordChatExporter `.json` chosen or dropped, uploaded
 * with its progress, then the import's stage and counts live (polled every 500 ms) until it completes with what it
 * added, or fails with the error and the files it names (nothing written). Recent imports below.
 */
export const ImportPage = () => {
  const isAdmin = useIsAdmin();
  const queryClient = useQueryClient();
  const input = useRef<HTMLInputElement>(null);
  const [file, setFile] = useState<File | null>(null);
  const [sent, setSent] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [jobId, setJobId] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const job = useQuery({
    queryKey: ['import', jobId],
    enabled: !!jobId,
    queryFn: () => getJob(jobId!),
    refetchInterval: (q) => (q.state.data && DONE.has(q.state.data.status) ? false : 500),
  });
  const recent = useQuery({
    queryKey: ['imports'],
    enabled: isAdmin,
    queryFn: () => unwrap(api.GET('/api/imports')),
    refetchInterval: job.data && !DONE.has(job.data.status) ? 2000 : false,
  });
  const finished = job.data && DONE.has(job.data.status) ? job.data.status : null;
  useEffect(() => {
    if (!finished) return;
    void queryClient.invalidateQueries({ queryKey: ['imports'] });
    if (finished === 'completed') void queryClient.invalidateQueries({ queryKey: ['channels'] });
  }, [finished, queryClient]);

  if (!isAdmin) return <Empty title="Importing is for admins.">Ask an admin, or use a key with the admin role.</Empty>;

  const start = async () => {
    if (!file) return;
    setError(null);
    setJobId(null);
    setSent(0);
    try {
      const accepted = await upload(file, (s, t) => setSent(t ? s / t : 0));
      setJobId(accepted.import_id);
    } catch (err) {
      setError(err);
      void queryClient.invalidateQueries({ queryKey: ['imports'] }); // a refused upload is listed too
    } finally {
      setSent(null);
    }
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const f = e.dataTransfer.files[0];
    if (f) setFile(f);
  };
  const j = job.data;
  const progress = j?.progress;

  return (
    <Flex direction="column" gap="4">
      <Heading as="h1" size="6">
        Import an export
      </Heading>
      <Card
        size="3"
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
        style={dragging ? { outline: '2px dashed var(--accent-8)' } : undefined}
      >
        <Flex direction="column" gap="3">
          <Text>
            A Slack export (the <code>.zip</code> from Workspace settings → Import/Export) or a DiscordChatExporter
            <code> .json</code>. Every file is checked first: a bad file refuses the whole import and nothing is
            written; importing the same export again adds nothing.
          </Text>
          <Flex gap="3" align="center" wrap="wrap">
            <input
              ref={input}
              id="import-file"
              type="file"
              accept=".zip,.json,application/zip,application/json"
              onChange={(e) => setFile(e.target.files?.[0] ?? null)}
              aria-label="Export file"
            />
            <Button onClick={() => void start()} disabled={!file || sent !== null || (!!j && !DONE.has(j.status))}>
              <UploadIcon /> Import
            </Button>
          </Flex>
          {file ? (
            <Text size="2" color="gray">
              {file.name} · {formatCount(Math.round(file.size / 1024))} KB
            </Text>
          ) : null}
          {sent !== null ? (
            <Box>
              <Text size="2">Uploading… {Math.round(sent * 100)} %</Text>
              <Progress value={Math.round(sent * 100)} aria-label="Upload" />
            </Box>
          ) : null}
        </Flex>
      </Card>
      {error ? <ErrorState error={error} /> : null}
      {error instanceof ApiError && (error.details as { file?: string } | null)?.file ? (
        <Text size="2" color="red">
          The file it names: <code>{(error.details as { file: string }).file}</code>. Nothing was imported.
        </Text>
      ) : null}
      {j ? (
        <Card size="2" data-testid="import-job">
          <Flex direction="column" gap="2" role="status" aria-live="polite">
            <Flex gap="2" align="center" wrap="wrap">
              <Text weight="bold">{j.file_name}</Text>
              <Badge color={j.status === 'completed' ? 'green' : j.status === 'failed' ? 'red' : 'blue'}>
                {j.status}
              </Badge>
              {j.platform ? <Badge variant="outline">{j.platform}</Badge> : null}
            </Flex>
            {progress && !DONE.has(j.status) ? (
              <Box>
                <Text size="2">
                  {progress.stage}: {formatCount(progress.done)}
                  {progress.total ? ` of ${formatCount(progress.total)}` : ''}
                </Text>
                <Progress
                  value={progress.total ? Math.round((progress.done / progress.total) * 100) : undefined}
                  aria-label="Import progress"
                />
              </Box>
            ) : null}
            {j.result ? (
              <Text size="2" data-testid="import-result">
                {Object.entries(j.result)
                  .filter(([, v]) => typeof v === 'number')
                  .map(([k, v]) =>
                    `${formatCount(v as number)} ${v === 1 ? k.replace(/s$/, '') : k}`.replace(/_/g, ' '),
                  )
                  .join(' · ')}
              </Text>
            ) : null}
            {j.error ? <ErrorState error={new ApiError(400, j.error.code, j.error.message, j.error.details)} /> : null}
            {j.status === 'completed' ? (
              <Text size="2">
                <Link to="/">See the channels</Link>
              </Text>
            ) : null}
          </Flex>
        </Card>
      ) : null}
      <Box>
        <Heading as="h2" size="4" mb="2">
          Recent imports
        </Heading>
        {recent.error ? <ErrorState error={recent.error} retry={() => void recent.refetch()} /> : null}
        {recent.data && recent.data.imports.length === 0 ? <Text color="gray">None yet.</Text> : null}
        {recent.data?.imports.length ? (
          <Table.Root variant="surface" size="1">
            <Table.Header>
              <Table.Row>
                <Table.ColumnHeaderCell>File</Table.ColumnHeaderCell>
                <Table.ColumnHeaderCell>Status</Table.ColumnHeaderCell>
                <Table.ColumnHeaderCell className="wide-only">Started</Table.ColumnHeaderCell>
              </Table.Row>
            </Table.Header>
            <Table.Body>
              {recent.data.imports.map((r) => (
                <Table.Row key={r.import_id}>
                  <Table.RowHeaderCell>{r.file_name}</Table.RowHeaderCell>
                  <Table.Cell>{r.status}</Table.Cell>
                  <Table.Cell className="wide-only">{formatTime(r.started_at)}</Table.Cell>
                </Table.Row>
              ))}
            </Table.Body>
          </Table.Root>
        ) : null}
      </Box>
    </Flex>
  );
};
