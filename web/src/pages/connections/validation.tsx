import { Box, Callout, Code, Flex, Text } from '@radix-ui/themes';
import { ApiError } from '../../api/client';
import { formatTime } from '../../api/hooks';
import { ErrorState } from '../../components/states';
import { SetupChecks, VALIDATION_MEANING } from './platforms';

/** A validation error of spec "Connection validation errors": code, message, required_scopes, retry_after. */
export interface ValidationError {
  code: string;
  message: string;
  required_scopes?: string[];
  retry_after?: number;
}

/**
 * The validation error inside an error of create or update (docs/connections.md: 400 INVALID_REQUEST, 429 or 503 whose
 * `details.validation_error` carries the spec's code), or null for any other error (such as a missing field).
 */
export const validationErrorOf = (e: unknown): ValidationError | null => {
  if (!(e instanceof ApiError)) return null;
  const v = (e.details as { validation_error?: ValidationError } | null)?.validation_error;
  return v && typeof v.code === 'string' ? v : null;
};

/**
 * A refusal of the platform (spec "Connection validation errors"): its code, message and meaning, the missing scopes
 * of INSUFFICIENT_PERMISSIONS (required_scopes), the wait of a rate limit, and spec "Platform setup errors".
 */
export const ValidationFailure = ({ error }: { error: ValidationError }) => (
  <Callout.Root color="red" role="alert">
    <Flex direction="column" gap="2">
      <Text>
        Validation failed: <Code color="red">{error.code}</Code> {error.message}
      </Text>
      {VALIDATION_MEANING[error.code] ? <Text>{VALIDATION_MEANING[error.code]}</Text> : null}
      {error.required_scopes?.length ? (
        <Box>
          <Text weight="bold">Missing scopes: </Text>
          <Flex asChild gap="1" wrap="wrap" display="inline-flex">
            <ul aria-label="Missing scopes" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
              {error.required_scopes.map((s) => (
                <li key={s}>
                  <Code>{s}</Code>
                </li>
              ))}
            </ul>
          </Flex>
        </Box>
      ) : null}
      {error.retry_after ? <Text>Try again in {error.retry_after} s.</Text> : null}
      <details>
        <summary>What to check on the platform</summary>
        <SetupChecks />
      </details>
    </Flex>
  </Callout.Root>
);

/** An error of create or update: the platform's validation refusal when there is one, else the API's error. */
export const SaveError = ({ error }: { error: unknown }) => {
  const v = validationErrorOf(error);
  return v ? <ValidationFailure error={v} /> : <ErrorState error={error} />;
};

/** The answer of POST /api/connections/{id}/validate (spec "Connections"): valid with what the platform granted, or the refusal. */
export type ValidateAnswer =
  | {
      valid: true;
      connection: { id: string; status: string; validated_at: string };
      workspace?: { id: string; name: string };
      bot?: { id: string; name: string };
      scopes?: string[];
    }
  | { valid: false; error: ValidationError };

/** Shows a validate answer: the workspace, bot and granted scopes, or the refusal. */
export const ValidateOutcome = ({ answer }: { answer: ValidateAnswer }) =>
  answer.valid ? (
    <Callout.Root color="green" role="status">
      <Flex direction="column" gap="1">
        <Text>
          Valid: connected at {formatTime(answer.connection.validated_at)}
          {answer.workspace ? ` to ${answer.workspace.name}` : ''}
          {answer.bot ? ` as ${answer.bot.name}` : ''}.
        </Text>
        {answer.scopes?.length ? (
          <Text>
            Granted:{' '}
            {answer.scopes.map((s, i) => (
              <span key={s}>
                {i ? ', ' : ''}
                <Code>{s}</Code>
              </span>
            ))}
          </Text>
        ) : null}
      </Flex>
    </Callout.Root>
  ) : (
    <ValidationFailure error={answer.error} />
  );
