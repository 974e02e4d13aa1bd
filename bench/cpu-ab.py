# Paired CPU A/B of start-ups on a loaded machine (not part of npm run bench): each command runs RUNS times,
# round by round in alternating order, and its CPU (user + system of the process and its waited-for children, from
# wait4's rusage, microseconds, not /usr/bin/time's 10 ms steps), wall and peak RSS are reported as medians, with the
# median of the per-round CPU differences against the first command. CPU suffers far less from other engineers' load
# than wall does. Environment (KEEL_HOME, ANTHROPIC_BASE_URL of a scripted server, …) is passed through; CWD sets
# the working folder.
#   python3 bench/cpu-ab.py 21 "floor=/usr/bin/node -e 0" "p=$PWD/bin/keel.js -p hi"
# With CPU_AB_JSON=1 it prints one JSON object instead (label -> medians in ms/MiB and the paired CPU difference);
# bench/lib.mjs's pairedCpu uses that. A command that fails stops it (exit 1).
import os, sys, time, statistics, json
# usage: cpu-ab.py RUNS label=argv ...
runs = int(sys.argv[1]); rows = []
for spec in sys.argv[2:]:
    label, cmd = spec.split('=', 1); rows.append((label, cmd.split()))
data = {l: [] for l, _ in rows}
devnull = os.open(os.devnull, os.O_RDWR)
for i in range(runs):
    order = rows if i % 2 == 0 else rows[::-1]
    for label, argv in order:
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os.dup2(devnull, 0); os.dup2(devnull, 1); os.dup2(devnull, 2)
            os.chdir(os.environ.get('CWD', '/tmp'))
            os.execv(argv[0], argv)
        _, status, ru = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
        if status != 0:
            print('FAIL', label, status, file=sys.stderr)
            if os.environ.get('CPU_AB_JSON') == '1': sys.exit(1)
        data[label].append((wall * 1000, (ru.ru_utime + ru.ru_stime) * 1000, ru.ru_maxrss / 1024))
base = rows[0][0]
if os.environ.get('CPU_AB_JSON') == '1':
    out = {}
    for label, _ in rows:
        d = data[label]
        out[label] = {'wall': statistics.median(x[0] for x in d), 'cpu': statistics.median(x[1] for x in d), 'rss': statistics.median(x[2] for x in d),
                      'pairedCpu': statistics.median(x[1] - y[1] for x, y in zip(d, data[base]))}
    print(json.dumps(out)); sys.exit(0)
for label, _ in rows:
    d = data[label]; w = statistics.median(x[0] for x in d); c = statistics.median(x[1] for x in d); r = statistics.median(x[2] for x in d)
    pc = statistics.median(x[1] - y[1] for x, y in zip(d, data[base]))
    print(f"{label:12} wall {w:7.1f} ms  cpu {c:7.1f} ms  rss {r:6.1f} MiB   paired cpu vs {base}: {pc:+7.1f} ms")
