/** The line a dialog shows once its type-ahead guard (typeahead.ts) dropped keys: why nothing happened. */
import React from 'react';
import { Text } from 'ink';

export function TypeaheadHint(props: { dropped: number }): React.ReactElement | null {
  if (props.dropped === 0) return null;
  return (
    <Text dimColor wrap="truncate-end">
      Keys typed before this appeared are ignored: answer when you have read it
    </Text>
  );
}
