/**
 * The loop's questions (`askUser`) as numbered lines answered by a line: permissions, the plan to approve,
 * the model's multiple-choice questions and free text. Questions from parallel calls wait in line; an
 * interrupted turn denies the one being asked.
 */
import type { Answer, PermissionChoice, Question } from '../../kernel/index.js';
import { callLine, clean, LABELS } from './lines.js';

const PLAN_LABELS: Partial<Record<PermissionChoice, string>> = { allow_once: 'Yes, carry it out (edits mode)', allow_session: 'Yes, carry it out (edits mode)', deny: 'No, keep planning' };

export interface QuestionIo {
  say(text: string): void;
  /**
   * Shows `prompt` and waits for a line; null when input ended or `signal` aborted. `secret`: the line is not echoed.
   * `decision`: the question asks for a decision, so no line typed ahead for the prompt may answer it (typeahead.ts).
   */
  ask(prompt: string, signal?: AbortSignal, secret?: boolean, decision?: boolean): Promise<string | null>;
  /** The running turn's signal: aborting it (Esc) denies the question being asked. */
  signal(): AbortSignal | undefined;
}

type PermissionQuestion = Extract<Question, { kind: 'permission' }>;

export function questionAsker(io: QuestionIo): (question: Question) => Promise<Answer> {
  let chain: Promise<unknown> = Promise.resolve();
  return (question) => {
    const next = chain.then(() => askOne(io, question));
    chain = next.catch(() => undefined);
    return next;
  };
}

async function askOne(io: QuestionIo, question: Question): Promise<Answer> {
  const signal = io.signal();
  if (question.kind === 'text') {
    const text = await io.ask(`${question.prompt} `, signal, question.secret);
    return { kind: 'text', text: text ?? '' };
  }
  if (question.kind === 'choice') {
    // One question after another: a number picks an option (several, comma-separated, when multiSelect), other words are the answer.
    const answers: string[][] = [];
    for (const q of question.questions) {
      io.say(`[question] ${q.header}: ${q.question}`);
      q.options.forEach((o, i) => io.say(`  ${i + 1}) ${o.label}${o.description ? ` - ${o.description}` : ''}`));
      const reply = (await io.ask(q.multiSelect ? 'Answer (numbers, comma-separated, or your own words): ' : 'Answer (a number or your own words): ', signal, false, true)) ?? '';
      const picks = reply.split(',').map((w) => q.options[Number(w.trim()) - 1]?.label);
      answers.push(reply.trim() && picks.every((p) => p !== undefined) ? (picks as string[]) : reply.trim() ? [reply.trim()] : []);
    }
    return { kind: 'choice', answers };
  }
  return question.call.name === 'exit_plan_mode' ? askPlan(io, question, signal) : askPermission(io, question, signal);
}

async function askPermission(io: QuestionIo, question: PermissionQuestion, signal: AbortSignal | undefined): Promise<Answer> {
  const input = (question.call.input ?? {}) as Record<string, unknown>;
  const who = question.subagent ? ` (sub-agent ${question.subagent.name})` : '';
  io.say(`[permission] ${callLine(question.call)}${who} needs your approval${question.reason ? ` (${question.reason})` : ''}`);
  const shown = question.preview ?? (question.call.name === 'bash' ? String(input.command ?? '') : typeof input.url === 'string' ? input.url : JSON.stringify(input, null, 2));
  for (const line of clean(shown).split('\n')) io.say(`  | ${line}`);
  io.say(question.options.map((o, i) => `${i + 1}) ${LABELS[o]}`).join('  '));
  const choice = await pick(io, question.options, `Answer [1-${question.options.length}, y = allow once, n = deny]: `, signal);
  return { kind: 'permission', choice };
}

/** exit_plan_mode: the plan in full, then approve (the mode becomes edits) or keep planning, with feedback. */
async function askPlan(io: QuestionIo, question: PermissionQuestion, signal: AbortSignal | undefined): Promise<Answer> {
  const input = (question.call.input ?? {}) as Record<string, unknown>;
  const plan = question.preview ?? (typeof input.plan === 'string' ? input.plan : '');
  io.say('[plan] The plan to approve:');
  for (const line of clean(plan).replace(/\s+$/, '').split('\n')) io.say(`  | ${line}`);
  io.say(question.options.map((o, i) => `${i + 1}) ${PLAN_LABELS[o] ?? LABELS[o]}`).join('  '));
  const choice = await pick(io, question.options, `Approve this plan? [1-${question.options.length}, y = yes, n = keep planning]: `, signal);
  if (choice !== 'deny' && choice !== 'deny_session') return { kind: 'permission', choice };
  if (signal?.aborted) return { kind: 'permission', choice };
  const feedback = (await io.ask('What should change? (Enter for nothing): ', signal))?.trim();
  return feedback ? { kind: 'permission', choice, message: feedback } : { kind: 'permission', choice };
}

async function pick(io: QuestionIo, options: PermissionChoice[], prompt: string, signal: AbortSignal | undefined): Promise<PermissionChoice> {
  for (;;) {
    const reply = await io.ask(prompt, signal, false, true);
    if (reply === null || signal?.aborted) return 'deny';
    const word = reply.trim().toLowerCase();
    const choice = word === 'y' || word === 'yes' ? 'allow_once' : word === 'n' || word === 'no' || word === '' ? 'deny' : options[Number(word) - 1];
    if (choice && options.includes(choice)) return choice;
    io.say(`"${reply}" is not an answer: type 1-${options.length}, y or n`);
  }
}
