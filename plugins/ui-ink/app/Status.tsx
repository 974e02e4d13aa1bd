/** The spinner (elapsed time, output tokens, "esc to interrupt") and the footer (model, mode, context, cost). */
import React, { useEffect, useState } from 'react';
import { Text } from 'ink';
import { formatElapsed, formatTokens } from '../format.js';
import type { Glyphs } from '../glyphs.js';

/**
 * The turn's spinner. `elapsed` is read on each tick; while `paused` (a dialog waits for the user) it stands still,
 * not animated, and says so.
 */
export function Spinner(props: { glyphs: Glyphs; elapsed(): number; paused: boolean; tokens: number; thinking: boolean; notice: string | null }): React.ReactElement {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (props.paused) return;
    const timer = setInterval(() => setTick((n) => n + 1), 120);
    return () => clearInterval(timer);
  }, [props.paused]);
  const frames = props.glyphs.spinner;
  const frame = frames[tick % frames.length];
  const what = props.paused ? 'Waiting for your answer' : (props.notice ?? (props.thinking ? 'Thinking' : 'Working'));
  const keyHint = props.paused ? '' : ` ${props.glyphs.dot} esc to interrupt`;
  return (
    <Text wrap="truncate-end">
      <Text color="magenta">{frame}</Text> {what}
      {props.glyphs.ellipsis} <Text dimColor>({formatElapsed(props.elapsed())} {props.glyphs.dot} {formatTokens(props.tokens)} tokens{keyHint})</Text>
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
