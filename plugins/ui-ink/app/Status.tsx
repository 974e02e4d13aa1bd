/** The spinner (elapsed time, output tokens, "esc to interrupt") and the footer (model, mode, context, cost). */
import React, { useEffect, useState } from 'react';
import { Text } from 'ink';
import { formatElapsed, formatTokens } from '../format.js';
import type { Glyphs } from '../glyphs.js';

export function Spinner(props: { glyphs: Glyphs; startedAt: number; tokens: number; thinking: boolean; notice: string | null }): React.ReactElement {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 120);
    return () => clearInterval(timer);
  }, []);
  const frames = props.glyphs.spinner;
  const frame = frames[Math.floor(now / 120) % frames.length];
  const what = props.notice ?? (props.thinking ? 'Thinking' : 'Working');
  return (
    <Text wrap="truncate-end">
      <Text color="magenta">{frame}</Text> {what}
      {props.glyphs.ellipsis} <Text dimColor>({formatElapsed(now - props.startedAt)} {props.glyphs.dot} {formatTokens(props.tokens)} tokens {props.glyphs.dot} esc to interrupt)</Text>
    </Text>
  );
}

export interface FooterProps {
  glyphs: Glyphs;
  model: string;
  mode: string;
  contextTokens: number;
  contextWindow: number;
  cost: number;
  hint: string | null;
}

export function Footer(props: FooterProps): React.ReactElement {
  const dot = ` ${props.glyphs.dot} `;
  const context = props.contextWindow > 0 ? `${Math.round((100 * props.contextTokens) / props.contextWindow)}% context` : `${formatTokens(props.contextTokens)} tokens`;
  if (props.hint) {
    return (
      <Text color="yellow" wrap="truncate-end">
        {props.hint}
      </Text>
    );
  }
  return (
    <Text dimColor wrap="truncate-end">
      {props.model}
      {dot}
      {props.mode} mode (shift+tab)
      {dot}
      {context}
      {dot}${props.cost.toFixed(4)}
    </Text>
  );
}
