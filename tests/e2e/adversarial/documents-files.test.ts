/**
 * Issue 24 class 9: PDFs and notebooks go through the file tools' safe open. A FIFO named .pdf or .ipynb is refused
 * at once instead of hanging the turn; notebook_edit never writes through a symbolic link (not even one swapped in
 * while edits run); and a small PDF whose object streams inflate to hundreds of megabytes is refused with a bound on
 * what is inflated, per stream and per read.
 */
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createDeflate } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { callTool, callTools, resultText, say, useHostile } from '../../helpers/adversary.js';
import { collect, spawnKeel } from '../../helpers/cli.js';

const hostile = useHostile();

const notebook = (source: string) => `${JSON.stringify({ cells: [{ cell_type: 'code', id: 'c1', metadata: {}, source: [source], outputs: [], execution_count: null }], metadata: {}, nbformat: 4, nbformat_minor: 5 }, null, 1)}\n`;

/** `bytes` zero bytes (whitespace to a PDF parser, which reads through all of them), deflated without holding them. */
function deflatedZeros(bytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const deflate = createDeflate({ level: 9 });
    const out: Buffer[] = [];
    deflate.on('data', (d: Buffer) => out.push(d));
    deflate.on('end', () => resolve(Buffer.concat(out)));
    deflate.on('error', reject);
    const chunk = Buffer.alloc(1024 * 1024);
    let left = bytes;
    const pump = () => {
      while (left > 0) {
        left -= chunk.length;
        if (!deflate.write(chunk)) return void deflate.once('drain', pump);
      }
      deflate.end();
    };
    pump();
  });
}

/** A PDF whose object streams are `streams`, each FlateDecode data inflating to a run of zeros. */
function pdfWithObjectStreams(streams: Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n')];
  streams.forEach((data, i) => {
    parts.push(Buffer.from(`${i + 3} 0 obj\n<< /Type /ObjStm /N 1 /First 10 /Filter /FlateDecode /Length ${data.length} >>\nstream\n`), data, Buffer.from('\nendstream\nendobj\n'));
  });
  parts.push(Buffer.from(`trailer\n<< /Root 1 0 R /Size ${streams.length + 3} >>\n%%EOF\n`));
  return Buffer.concat(parts);
}

/** Peak resident memory of a live process, in MB (Linux /proc). */
function peakMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

describe('class 9: documents through the safe open', () => {
  it('a FIFO named .pdf or .ipynb is refused at once, for reads and for notebook_edit', async () => {
    const h = await hostile([
      callTools({ name: 'read_file', input: { path: 'pipe.pdf' }, id: 'p' }, { name: 'read_file', input: { path: 'pipe.ipynb' }, id: 'n' }, { name: 'notebook_edit', input: { path: 'pipe.ipynb', cell_number: 1, new_source: 'x' }, id: 'e' }),
      say('done'),
    ]);
    execFileSync('mkfifo', [h.path('pipe.pdf'), h.path('pipe.ipynb')]);
    h.settle();
    const run = await h.run(['-p', 'read the documents', '--permission-mode', 'auto']);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    for (const id of ['p', 'n', 'e']) {
      expect(v.results[id]?.is_error, id).toBe(true);
      expect(resultText(v.results[id]), id).toMatch(/pipe\.(pdf|ipynb) is not a regular file/);
    }
    expect(v.changed).toEqual([]);
  });

  it('notebook_edit does not write through a symbolic link to a notebook outside, even in auto mode', async () => {
    const h = await hostile([callTool('notebook_edit', { path: 'linked.ipynb', cell_number: 1, new_source: 'import os; os.system("id")' }, 'e'), say('done')]);
    const canary = path.join(h.outside, 'canary.ipynb');
    writeFileSync(canary, notebook('print("canary")'));
    symlinkSync(canary, h.path('linked.ipynb'));
    h.settle();
    const run = await h.run(['-p', 'edit', '--permission-mode', 'auto']);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(v.results.e?.is_error).toBe(true);
    expect(resultText(v.results.e)).toContain('linked.ipynb is a symbolic link; notebook_edit does not write through links');
    expect(readFileSync(canary, 'utf8')).toBe(notebook('print("canary")'));
    expect(v.changed).toEqual([]);
  });

  it('edits raced with a symbolic link swapped in and out never land in the protected file it points to', async () => {
    const edits = Array.from({ length: 24 }, (_, i) => ({ name: 'notebook_edit', input: { path: 'race.ipynb', cell_number: 1, new_source: `PWNED ${i}` }, id: `e${i}` }));
    const h = await hostile([callTools(...edits.slice(0, 12)), callTools(...edits.slice(12)), say('done')]);
    // ~/.bashrc is protected in every mode: the permission check asks (and headless refuses) whenever it sees the link.
    const bashrc = path.join(h.home, '.bashrc');
    writeFileSync(bashrc, notebook('# bashrc'));
    h.write('race.ipynb', notebook('print(1)'));
    const swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const [nb, target, body] = process.argv.slice(1);
         const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
         for (;;) {
           try { fs.writeFileSync(nb + '.f', body); fs.renameSync(nb + '.f', nb); } catch {}
           pause(1);
           try { fs.symlinkSync(target, nb + '.l'); fs.renameSync(nb + '.l', nb); } catch {}
           pause(0.5);
         }`,
        h.path('race.ipynb'),
        bashrc,
        notebook('print(1)'),
      ],
      { stdio: 'ignore' },
    );
    try {
      const run = await h.run(['-p', 'edit the notebook', '--permission-mode', 'edits'], { timeoutMs: 60_000 });
      expect(run.code, run.stderr).toBe(0);
    } finally {
      swapper.kill('SIGKILL');
    }
    expect(readFileSync(bashrc, 'utf8')).toBe(notebook('# bashrc'));
    const v = h.verdict();
    expect(Object.keys(v.results).filter((id) => id.startsWith('e'))).toHaveLength(24);
    expect(v.changed.filter((p) => p.startsWith(h.home))).toEqual([]);
  }, 90_000);

  it('a small PDF whose object stream inflates to 256 MB is refused, naming the file and the bound, with memory bounded', async () => {
    const bomb = pdfWithObjectStreams([await deflatedZeros(256 * 1024 * 1024)]);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    let peak = 0;
    const h = await hostile([
      callTool('read_file', { path: 'bomb.pdf' }, 'b'),
      () => {
        peak = peakMb(child.pid!);
        return say('done');
      },
    ]);
    writeFileSync(h.path('bomb.pdf'), bomb);
    h.settle();
    const child = spawnKeel(['-p', 'read bomb.pdf', '--permission-mode', 'auto'], { cwd: h.dir, env: h.env });
    const run = await collect(child, 60_000);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(v.results.b?.is_error).toBe(true);
    expect(resultText(v.results.b)).toMatch(/^read_file: refused bomb\.pdf: a compressed stream inflates to more than 32 MB \(bounds: 32 MB per stream, 96 MB per read\)/);
    // Unbounded, this read held the whole inflated stream (and its copies): well over 512 MB.
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(400);
  }, 90_000);

  it('object streams each under the per-stream bound are refused once together they pass the bound per read', async () => {
    const stream = await deflatedZeros(30 * 1024 * 1024);
    const streams = [stream, stream, stream, stream, stream];
    const h = await hostile([callTool('read_file', { path: 'many.pdf' }, 'b'), say('done')]);
    writeFileSync(h.path('many.pdf'), pdfWithObjectStreams(streams));
    h.settle();
    const run = await h.run(['-p', 'read many.pdf', '--permission-mode', 'auto'], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(v.results.b?.is_error).toBe(true);
    expect(resultText(v.results.b)).toContain('read_file: refused many.pdf: its compressed streams inflate to more than 96 MB in all');
  }, 90_000);
});
