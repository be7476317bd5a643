import { Badge, Box, Code, Flex, Heading, Table, Text } from '@radix-ui/themes';

/** The two platforms a connection reads (spec "Connection": `platform_a` or `platform_b`). */
export type Platform = 'platform_a' | 'platform_b';

/** A credential field of a platform (spec "Connection" credentials); `secret` fields are password inputs. */
export interface CredentialField {
  name: 'bot_token' | 'signing_secret' | 'guild_id';
  label: string;
  secret: boolean;
  hint: string;
}

/** What the connection form shows for each platform: its name, credential fields and the exact grants it needs. */
export interface PlatformInfo {
  label: string;
  kind: string;
  fields: CredentialField[];
  /** What Atlas checks when it validates (packages/platforms: SLACK_REQUIRED_SCOPES, DISCORD_REQUIRED_PERMISSIONS). */
  checked: { title: string; items: string[] }[];
  /** The spec's list of required bot scopes (spec "Connections"). */
  specScopes: string[];
  note: string;
}

/**
 * The platforms, their credentials (spec "Connection") and the scopes to grant: the spec's "Required bot scopes"
 * (spec "Connections") and what validation checks (docs/connections.md: platform_a the granted scopes against
 * channels:history, channels:read, groups:history, groups:read, users:read; platform_b VIEW_CHANNEL and
 * READ_MESSAGE_HISTORY in the guild and the Server Members Intent, required scope `guild.members`).
 */
export const PLATFORMS: Record<Platform, PlatformInfo> = {
  platform_a: {
    label: 'Slack-like workspace',
    kind: 'workspace',
    fields: [
      { name: 'bot_token', label: 'Bot token', secret: true, hint: 'The bot user OAuth token (xoxb-…).' },
      { name: 'signing_secret', label: 'Signing secret', secret: true, hint: "The app's signing secret." },
    ],
    checked: [
      {
        title: 'Bot token scopes (checked on validation)',
        items: ['channels:history', 'channels:read', 'groups:history', 'groups:read', 'users:read'],
      },
    ],
    specScopes: ['channels:history', 'channels:read', 'users:read', 'files:read', 'links:read:write'],
    note: 'groups:read and groups:history let Atlas read the private channels the bot is invited to; files:read and links:read:write are in the spec’s list but no call of Atlas uses them.',
  },
  platform_b: {
    label: 'Discord-like guild',
    kind: 'guild',
    fields: [
      { name: 'bot_token', label: 'Bot token', secret: true, hint: "The bot's token (Developer Portal, Bot)." },
      { name: 'guild_id', label: 'Guild id', secret: false, hint: 'The server (guild) id, a number of 15-20 digits.' },
    ],
    checked: [
      {
        title: 'Bot permissions in the guild (checked on validation)',
        items: ['VIEW_CHANNEL', 'READ_MESSAGE_HISTORY'],
      },
      {
        title: 'Privileged gateway intents',
        items: ['Server Members Intent (guild.members)', 'Message Content Intent'],
      },
    ],
    specScopes: ['guild.messages', 'guild.channels', 'guild.members'],
    note: 'Without the Server Members Intent the members of private channels cannot be read: validation answers INSUFFICIENT_PERMISSIONS with required scope guild.members.',
  },
};

/** Spec "Platform setup errors": what to check for each error text a platform shows. */
export const SETUP_CHECKS: [string, string][] = [
  [
    'Invalid Token',
    'the token has no extra spaces, the bot was not deleted or regenerated, the token was copied correctly',
  ],
  [
    'Missing Access',
    'the bot role’s permissions, read messages and read message history granted, the bot is in the channel',
  ],
  [
    'No channels appearing',
    'the bot is running, the token is valid, the bot has server permissions, the message-content intent is enabled',
  ],
];

/** Spec "Connection validation errors": what each code means, shown beside a refusal. */
export const VALIDATION_MEANING: Record<string, string> = {
  INVALID_CREDENTIALS: 'The credentials are invalid.',
  AUTH_EXPIRED: 'The token has expired: issue a new one.',
  RATE_LIMITED: 'The platform rate-limited the check: try again later.',
  INSUFFICIENT_PERMISSIONS: 'The bot lacks required scopes: grant those listed, reinstall the bot, then validate.',
  NETWORK_ERROR: 'Atlas could not reach the platform.',
  PLATFORM_ERROR: 'The platform answered with an error.',
};

/** The platform's name as a badge. */
export const PlatformBadge = ({ platform }: { platform: string }) => (
  <Badge highContrast color={platform === 'platform_a' ? 'indigo' : 'violet'}>
    {platform === 'platform_a' ? 'Slack-like' : platform === 'platform_b' ? 'Discord-like' : platform}
  </Badge>
);

/** A connection's status (spec "Connection status"): connected, disconnected (can reconnect), error (needs attention). */
export const StatusBadge = ({ status }: { status: string }) => (
  <Badge highContrast color={status === 'connected' ? 'green' : status === 'error' ? 'red' : 'gray'}>
    {status === 'error' ? 'error: needs attention' : status}
  </Badge>
);

/** The exact scopes / permissions to grant on the platform for a connection, and the spec's setup checks. */
export const ScopesToGrant = ({ platform }: { platform: Platform }) => {
  const p = PLATFORMS[platform];
  return (
    <Box>
      <Heading as="h3" size="3" mb="2">
        Grant the bot these scopes
      </Heading>
      <Flex direction="column" gap="2">
        {p.checked.map((g) => (
          <Box key={g.title}>
            <Text as="div" size="2" weight="medium">
              {g.title}
            </Text>
            <Flex gap="1" wrap="wrap" mt="1" asChild>
              <ul aria-label={g.title} style={{ listStyle: 'none', padding: 0, margin: 0 }}>
                {g.items.map((s) => (
                  <li key={s}>
                    <Code size="2">{s}</Code>
                  </li>
                ))}
              </ul>
            </Flex>
          </Box>
        ))}
        <Box>
          <Text as="div" size="2" weight="medium">
            Required bot scopes in the spec
          </Text>
          <Flex gap="1" wrap="wrap" mt="1" asChild>
            <ul aria-label="Required bot scopes in the spec" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
              {p.specScopes.map((s) => (
                <li key={s}>
                  <Code size="2" variant="outline">
                    {s}
                  </Code>
                </li>
              ))}
            </ul>
          </Flex>
        </Box>
        <Text size="2" color="gray">
          {p.note}
        </Text>
      </Flex>
    </Box>
  );
};

/** Spec "Platform setup errors" as a small table: error text and what to check. */
export const SetupChecks = () => (
  <section aria-label="Platform setup errors">
    <Table.Root size="1" variant="ghost">
      <Table.Header>
        <Table.Row>
          <Table.ColumnHeaderCell>The platform says</Table.ColumnHeaderCell>
          <Table.ColumnHeaderCell>Check</Table.ColumnHeaderCell>
        </Table.Row>
      </Table.Header>
      <Table.Body>
        {SETUP_CHECKS.map(([text, check]) => (
          <Table.Row key={text}>
            <Table.RowHeaderCell>{text}</Table.RowHeaderCell>
            <Table.Cell>{check}</Table.Cell>
          </Table.Row>
        ))}
      </Table.Body>
    </Table.Root>
  </section>
);
