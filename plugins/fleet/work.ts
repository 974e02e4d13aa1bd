/**
 * `keel fleet work`: a BullMQ worker whose jobs are keel runs. A task's lock in Redis is extended while its run goes
 * on; a worker that dies (kill -9) stops extending it, and BullMQ's stalled-job check on another worker puts the
 * task back in the queue, where the next worker resumes the task's session (fleet-worker preset: sessions on Redis)
 * with the work in progress applied to a fresh checkout. SIGTERM drains.
 */
import { hostname } from 'node:os';
import { UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import { KeelError } from '../../kernel/index.js';
import { startBroker } from './broker.js';
import { applyPatch, diffOf, makeCheckout } from './checkout.js';
import { parse, type CommandContext } from './cold.js';
import { fleetKeys, type TaskProgress, type TaskResult } from './keys.js';
import type { TaskData } from './queue.js';
import { Queue } from 'bullmq';
import { checkStructured, MissingEnvError, runTask } from './run-task.js';
import { checkTaskUsers, createTaskUser, type TaskUser } from './task-user.js';
import { sessionState, discardUnstarted } from './resume.js';
import { checkQueuedTask, type Task } from './tasks.js';

/**
 * A run's commands can read their ancestors' /proc/<pid>/environ, this worker's among them: its API key and Redis
 * URL are cleared from it (process.env keeps them for the runs) before any run starts. tool-bash does the clearing.
 */
function hideWorkerCredentials(ctx: CommandContext): void {
  const processes = ctx.kernel.services.get('processes') as { hideCredentials?(): { hidden: string[]; reason?: string } } | undefined;
  const result = processes?.hideCredentials?.();
  if (result?.reason) ctx.kernel.log(process.platform === 'linux' ? 'warn' : 'debug', `fleet work: credentials stay readable in /proc/${process.pid}/environ: ${result.reason}`, 'fleet');
}

export async function workCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const { values } = await parse('work', args, { concurrency: { type: 'string' } });
  const settings = ctx.settings;
  let concurrency = settings.concurrency;
  if (values.concurrency !== undefined) {
    concurrency = Number(values.concurrency);
    if (!Number.isInteger(concurrency) || concurrency <= 0) throw new KeelError(`fleet work: --concurrency: expected a positive integer, got "${values.concurrency}"`, { exitCode: 2 });
  }
  const keys = fleetKeys(settings.queue);
  const me = `${hostname()}:${process.pid}`;
  const say = (text: string) => ctx.io.stderr.write(`keel fleet: ${text}\n`);
  hideWorkerCredentials(ctx);

  let fatal: Error | undefined;
  let shutdown: (() => void) | undefined;
  const redis = await ctx.redis.connect(settings.redisUrl, {
    what: 'fleet',
    onGiveUp: (err) => {
      fatal = err;
      shutdown?.();
    },
  });
  if (settings.taskUsers) {
    try {
      await checkTaskUsers(redis, settings, me, ctx.redis.redact);
    } catch (err) {
      redis.disconnect();
      throw err;
    }
  }
  const queue = new Queue<TaskData, TaskResult>(settings.queue, { connection: redis });
  queue.on('error', () => undefined);

  // A budget raised since the fleet stopped for it lets the fleet go on.
  if (settings.budgetUsd !== undefined && (await redis.get(keys.budgetStop))) {
    const spent = Number(await redis.get(keys.spent)) || 0;
    if (spent < settings.budgetUsd) {
      await redis.del(keys.budgetStop);
      await queue.resume();
    }
  }

  /** What each running job's run reported it had spent: the fleet's total grows by the differences. */
  const reported = new Map<string, { costUsd: number; progress: TaskProgress; job: Job<TaskData, TaskResult>; snapshotTurns: number; snapshot(): Promise<void> }>();
  const budgetReached = async () => settings.budgetUsd !== undefined && (Number(await redis.get(keys.spent)) || 0) >= settings.budgetUsd;
  const addSpent = async (jobId: string, costUsd: number) => {
    const entry = reported.get(jobId);
    if (!entry || costUsd <= entry.costUsd) return;
    const delta = costUsd - entry.costUsd;
    entry.costUsd = costUsd;
    const total = Number(await redis.incrbyfloat(keys.spent, delta));
    if (settings.budgetUsd !== undefined && total >= settings.budgetUsd && !(await redis.get(keys.budgetStop))) {
      await redis.set(keys.budgetStop, `the fleet's budget of $${settings.budgetUsd} is reached ($${total.toFixed(4)} spent)`);
      // Paused in Redis: no worker anywhere takes another task; running ones finish.
      await queue.pause();
      say(`budget of $${settings.budgetUsd} reached ($${total.toFixed(4)} spent): no more tasks are taken`);
    }
  };
  const broker = await startBroker(settings, redis, async (jobId, report) => {
    const entry = reported.get(jobId);
    if (!entry) return;
    entry.progress.costUsd = report.costUsd;
    void entry.job.updateProgress({ ...entry.progress }).catch(() => undefined);
    void addSpent(jobId, report.costUsd).catch(() => undefined);
    // Before each model request after the first: the checkout as the earlier turns left it, for whoever takes the task
    // over. Taken before the request may go out, so a worker killed at any point leaves every finished turn's work.
    if (report.turns > entry.snapshotTurns) {
      entry.snapshotTurns = report.turns;
      await entry.snapshot().catch((err: unknown) => say(`task ${jobId}: cannot save the work in progress: ${(err as Error).message}`));
    }
  });
  /**
   * Resume only a session the run's store holds with a model turn in it. A run that died before that (OOM, kill -9, a
   * crash at start) left nothing to resume: its leftovers go, and the run starts afresh under the same session id.
   */
  const resumeOrRestart = async (job: Job<TaskData, TaskResult>, task: Task): Promise<boolean> => {
    const state = await sessionState(redis, keys.runStream(task.sessionId));
    if (state.kind === 'resumable') {
      say(`resuming task ${task.id}`);
      return true;
    }
    if (!job.data.started && state.kind === 'absent') {
      say(`starting task ${task.id}`);
      return false;
    }
    const why = state.kind === 'absent' ? 'no session was written' : `its session holds no model turn (${state.entries} entr${state.entries === 1 ? 'y' : 'ies'}, removed)`;
    const note = `its last run stopped before it recorded a model turn (${why}): starting afresh under session ${task.sessionId}`;
    if (state.kind === 'unstarted') await discardUnstarted(redis, keys.runPrefix(task.sessionId), task.sessionId, state.projectRoots);
    // Changes of a run the session does not know of would puzzle the fresh one: it starts from the task's checkout.
    await redis.del(keys.wip(task.id));
    say(`task ${task.id}: ${note}`);
    reported.get(job.id!)!.progress.restarted = note;
    await job.log(note).catch(() => undefined);
    return false;
  };
  const handBack = new AbortController();
  const processor = async (job: Job<TaskData, TaskResult>, token?: string, signal?: AbortSignal): Promise<TaskResult> => {
    const checked = checkQueuedTask(job.data?.task);
    if (typeof checked === 'string') throw new UnrecoverableError(`task payload ${job.id}: ${checked}`);
    const task = checked;
    if (await redis.sismember(keys.cancelled, task.id)) throw new UnrecoverableError('cancelled');
    if (await budgetReached()) {
      await job.moveToWait(token);
      throw new WaitingError();
    }
    const started = Date.now();
    const checkout = await makeCheckout(task, settings.workDir);
    const progress: TaskProgress = { turns: 0, costUsd: 0, worker: me, sessionId: task.sessionId, resumed: false };
    reported.set(job.id!, {
      costUsd: 0,
      progress,
      job,
      snapshotTurns: 0,
      snapshot: async () => void (await redis.set(keys.wip(task.id), await diffOf(checkout))),
    });
    const run = new AbortController();
    const onCancel = () => run.abort('cancel');
    const onHandBack = () => run.abort('hand-back');
    signal?.addEventListener('abort', onCancel, { once: true });
    handBack.signal.addEventListener('abort', onHandBack, { once: true });
    let user: TaskUser | undefined;
    try {
      // Made first: deleting a dead worker's user of this task also cuts its orphaned run off the session.
      if (settings.taskUsers) user = await createTaskUser(redis, settings, task.sessionId);
      const resume = await resumeOrRestart(job, task);
      progress.resumed = resume;
      void job.updateProgress({ ...progress }).catch(() => undefined);
      if (resume) {
        const wip = await redis.get(keys.wip(task.id));
        if (wip) await applyPatch(checkout, wip);
        say(`task ${task.id}: ${wip ? `applied the work in progress (${wip.length} bytes)` : 'no work in progress to apply'}`);
      }
      const outcome = await runTask(
        {
          task,
          cwd: checkout.dir,
          resume,
          keelCommand: settings.keelCommand,
          preset: settings.preset,
          env: ctx.env,
          extraEnv: {
            // An unattended run's commands get none of Keel's credentials (the API key, the Redis URL).
            KEEL_SUBPROCESS_ENV_SCRUB: '1',
            KEEL_FLEET_BROKER: broker.urlFor(job.id!),
            // The run's Redis user reaches only this prefix (taskUsers), where its sessions go.
            KEEL_REDIS_URL: user?.url ?? settings.runRedisUrl,
            KEEL_REDIS_SESSION_PREFIX: keys.runPrefix(task.sessionId),
            // A session whose writer died is free as soon as its task can be taken over.
            KEEL_REDIS_SESSION_LOCK_MS: String(settings.lockDurationMs),
          },
          signal: run.signal,
        },
        {
          onInit() {
            if (job.data.started) return;
            job.data.started = true;
            void job.updateData({ ...job.data, started: true }).catch(() => undefined);
          },
          onTurn(turns, lastTool) {
            progress.turns = turns;
            if (lastTool) progress.lastTool = lastTool;
            void job.updateProgress({ ...progress }).catch(() => undefined);
          },
        },
      );
      if (run.signal.aborted) {
        if (run.signal.reason === 'hand-back') {
          say(`handing task ${task.id} back to the queue`);
          await job.moveToWait(token);
          throw new WaitingError();
        }
        say(`task ${task.id} cancelled`);
        throw new UnrecoverableError('cancelled');
      }
      const result = outcome.result;
      if (!result) throw new Error(`keel exited with ${outcome.code ?? outcome.signal} and no result: ${outcome.stderrTail || '(no output)'}`);
      const costUsd = Number(result.total_cost_usd) || 0;
      await addSpent(job.id!, costUsd);
      const text = typeof result.result === 'string' ? result.result : '';
      const out: TaskResult = {
        id: task.id,
        conclusion: String(result.subtype ?? 'unknown'),
        isError: Boolean(result.is_error),
        costUsd,
        turns: Number(result.num_turns) || 0,
        result: text,
        sessionId: task.sessionId,
        worker: me,
        durationMs: Date.now() - started,
        patch: await diffOf(checkout),
      };
      if (typeof result.error === 'string') out.error = result.error;
      if (task.jsonSchema && !out.isError) {
        const checked = checkStructured(task, text);
        if ('value' in checked) out.structured = checked.value;
        else Object.assign(out, { conclusion: 'error_invalid_output', isError: true, error: checked.error });
      }
      await redis.del(keys.wip(task.id));
      say(`finished task ${task.id}: ${out.conclusion}, $${costUsd.toFixed(4)}, ${out.turns} turn${out.turns === 1 ? '' : 's'}`);
      return out;
    } catch (err) {
      if (err instanceof MissingEnvError) throw new UnrecoverableError(err.message);
      throw err;
    } finally {
      signal?.removeEventListener('abort', onCancel);
      handBack.signal.removeEventListener('abort', onHandBack);
      reported.delete(job.id!);
      await user?.remove().catch((err: unknown) => say(`task ${task.id}: cannot delete its Redis user: ${(err as Error).message}`));
      await checkout.remove().catch((err: unknown) => say(`cannot remove ${checkout.dir}: ${(err as Error).message}`));
    }
  };

  const worker = new Worker<TaskData, TaskResult>(settings.queue, processor, {
    connection: redis,
    concurrency,
    lockDuration: settings.lockDurationMs,
    stalledInterval: settings.stalledIntervalMs,
    maxStalledCount: settings.maxStalledCount,
    autorun: false,
  });
  worker.on('error', (err) => say(`worker: ${err.message}`));
  worker.on('failed', (job, err) => {
    if (job && !(err instanceof WaitingError) && err.name !== 'WaitingError') say(`task ${job.id} failed: ${err.message}`);
  });

  const subscriber = redis.duplicate();
  subscriber.on('error', () => undefined);
  await subscriber.subscribe(keys.cancelChannel);
  subscriber.on('message', (_channel, id: string) => {
    if (id === '*') worker.cancelAllJobs('cancelled');
    else worker.cancelJob(id, 'cancelled');
  });

  let draining = false;
  const closed = new Promise<void>((resolve) => {
    shutdown = () => {
      if (draining) {
        handBack.abort();
        return;
      }
      draining = true;
      if (!fatal) say(`draining: no new task; waiting for running ones (SIGTERM again hands them back)`);
      if (settings.drainTimeoutMs) setTimeout(() => handBack.abort(), settings.drainTimeoutMs).unref();
      // Without Redis nothing can be handed back or finished: stop the runs and go; their tasks are taken over later.
      if (fatal) handBack.abort();
      void worker.close(Boolean(fatal)).then(resolve, resolve);
    };
  });
  const onSignal = () => shutdown?.();
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  say(`worker ${me} on ${ctx.redis.redact(settings.redisUrl)}, queue ${settings.queue}, concurrency ${concurrency}${settings.requestsPerMinute ? `, ${settings.requestsPerMinute} requests/min fleet-wide` : ''}`);
  void worker.run().catch((err: unknown) => {
    fatal ??= err instanceof Error ? err : new Error(String(err));
    shutdown?.();
  });
  await closed;
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  await subscriber.quit().catch(() => subscriber.disconnect());
  await broker.close();
  await queue.close().catch(() => undefined);
  await redis.quit().catch(() => redis.disconnect());
  if (fatal) {
    ctx.io.stderr.write(`keel: ${fatal.message}\n`);
    return 1;
  }
  say('stopped');
  return 0;
}
