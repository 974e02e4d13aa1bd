import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import instructions from '../../../plugins/instructions/index.js';
import memoryIndex, { type MemoryIndexService } from '../../../plugins/memory-index/index.js';
import { testKernel } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace | undefined;
afterEach(() => ws?.cleanup());

describe('the memory-index service (#note)', () => {
  it('appends a line to .keel/MEMORY.md, creating it, and after a last line without a newline', async () => {
    ws = makeWorkspace();
    const service = testKernel([instructions(), memoryIndex()]).services.get('memory-index') as MemoryIndexService;
    const file = await service.append(ws.dir, 'tests run with npm test');
    expect(file).toBe(ws.path('.keel/MEMORY.md'));
    ws.write('.keel/MEMORY.md', `${readFileSync(file, 'utf8')}- no newline at the end`);
    await service.append(ws.dir, 'two\nlines become one');
    expect(readFileSync(file, 'utf8')).toBe('- tests run with npm test\n- no newline at the end\n- two lines become one\n');
  });

  it('refuses an empty note', async () => {
    ws = makeWorkspace();
    const service = testKernel([instructions(), memoryIndex()]).services.get('memory-index') as MemoryIndexService;
    await expect(service.append(ws.dir, '   ')).rejects.toThrow('#: the note is empty');
  });

  it('never writes through an index that is a link out of the project or has another hard link', async () => {
    ws = makeWorkspace();
    const outside = mkdtempSync(path.join(tmpdir(), 'keel-memory-outside-'));
    try {
      const target = path.join(outside, '.gitconfig');
      writeFileSync(target, '[user]\n\tname = me\n');
      mkdirSync(ws.path('.keel'), { recursive: true });
      symlinkSync(target, ws.path('.keel/MEMORY.md'));
      const service = testKernel([instructions(), memoryIndex()]).services.get('memory-index') as MemoryIndexService;
      await expect(service.append(ws.dir, 'a note')).rejects.toThrow(/#: .*MEMORY\.md is not written: it resolves to .*outside the project/);
      rmSync(ws.path('.keel/MEMORY.md'));
      linkSync(target, ws.path('.keel/MEMORY.md'));
      await expect(service.append(ws.dir, 'a note')).rejects.toThrow(/has 2 hard links/);
      expect(readFileSync(target, 'utf8')).toBe('[user]\n\tname = me\n');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
