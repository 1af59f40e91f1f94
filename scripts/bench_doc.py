# SPDX-License-Identifier: MIT
"""The prose of docs/benchmarks.md around the tables of scripts/bench-report.

render(r, rep, plots) -> markdown. `r` is bench-report's Results, `rep` the bench-report
module (tables, verdicts), `plots` the PNG names it made. Every number in the text comes
from the results; explanations that hold only under a condition (a target missed, a miss
within the noise) are written only when the condition holds.
"""
import os
import subprocess


def binary_facts(path):
    """(size in KiB, number of shared libraries) of an executable, or None."""
    try:
        out = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
        return os.path.getsize(path) // 1024, sum("=>" in line for line in out.splitlines())
    except (OSError, subprocess.CalledProcessError):
        return None


def pct(x):
    return f"{(x - 1) * 100:+.1f} %"


def section_targets(r, rep):
    out = ["## The targets", "",
           "Reported, not asserted: `make bench` computes each verdict from the run's own "
           "numbers. A ratio is *time sandboxed / time bare* for the same operation in the same "
           "round, *bare* being the geometric mean of two unsandboxed loops. A miss is judged against the noise: the ratio of a second unsandboxed loop "
           "measured exactly like the sandboxes (it would be 1.00 on a quiet machine), and a "
           "sign test (in how many rounds the sandboxed pass was the slower of the pair; p is "
           "the chance of a count at least that lopsided with no effect at all). Issue 17's "
           "targets (the last three) are judged in the hot-path section instead, against no "
           "BPF program at all, with *the floor* an empty program plus one map lookup on each "
           "hook. Their bounds (5 points, 1 point) are smaller than the spread of this "
           "emulated machine's wall-clock rounds (tens of points), so the verdict is taken "
           "from the programs' own run time (bpf_stats: a program's time is not the rest of "
           "the machine's, though an interrupt landing in it still adds): "
           "*points by the programs' run time* = (BPF ns per operation of pysb-bpf - of the "
           "floor, each the lowest of its passes, since an interrupt landing in a program "
           "only adds to its time) / the operation's ns with no BPF program x 100. It leaves out the "
           "trampoline around each program call, so the calls pysb-bpf makes beyond the "
           "floor's are counted beside it; the wall-clock points (per-round differences of "
           "two ratios) are shown too.", ""]
    for t, lines in rep.targets(r):
        out.append(f"**{t}**")
        out.append("")
        out += [f"- {x}" for x in lines]
        out.append("")
    return out


def why_overhead(r, rep):
    out = []
    reasons = {
        "open": "every open runs `pysb_file_open`: the task's sandbox (a copy of its entry "
                "kept in the task's storage, beside its directory cache: docs/design.md, \"A "
                "copy of the entry for the file hooks\"), the file's own label, then the "
                "task's cached answer for the file's "
                "directory, or on a miss a walk from there up to the nearest rule, one probe "
                "read and one `inode_labels` lookup per level (docs/design.md, \"The cost of "
                "the walk\" and \"The directory verdict cache\"). The benchmark's file "
                "`/tmp/pysb-bench/data/a/b/c/d/file` lies 5 levels below its rule "
                "`expose-ro=/tmp/pysb-bench/data`; the loop opens it again and again, so its "
                "directory's answer is cached after the first open, and the cost does not "
                "follow the number of rules (see Scaling and the depth sweep of the hot-path "
                "section)",
        "connect": "each connection runs `pysb_socket_create` (on `socket()`) and "
                   "`pysb_connect4` (`cgroup/connect4`: the sandbox lookup, one LPM-trie lookup, "
                   "one port-set lookup and a binary search of at most 7 steps)",
        "exec": "a fork+exec runs `pysb_task_alloc`, `pysb_bprm_check_security`, and "
                "`pysb_file_open` / `pysb_mmap_file` path walks for every file the new process "
                "opens or maps (the binary, `ld.so.cache`, libc)",
    }
    for op, s, noise, added, met in rep.target_overhead(r):
        if met:
            continue
        label = rep.OP_LABEL[op]
        k, n, p = rep.sign_test(s.v)
        if not rep.real_cost(s):
            sizes = r.meta["file_rules"] if op in rep.FILE_OPS else r.meta["net_rules"]
            cfgf = r.file_cfg if op in rep.FILE_OPS else r.net_cfg
            others = []
            for size in sizes:
                c = cfgf(size)
                if r.has(c, op):
                    o = r.ratio(c, op)
                    ko, no, _ = rep.sign_test(o.v)
                    others.append(f"{size:,} rules x{o.med:.2f} ({ko}/{no})")
            out.append(f"- {label}: the median misses by {(s.med - 1.05) * 100:.1f} points, but the "
                       f"sandboxed pass was the slower one in {k} of {n} rounds (sign test p={p:.3f}, "
                       f"above the {0.05 / len(rep.TARGET_OPS):.3f} this target's three tests "
                       f"allow) while the second bare loop ranged "
                       f"{pct(noise.lo) if noise else '?'} to {pct(noise.hi) if noise else '?'} "
                       f"around the first: by itself this figure does not clear the noise. "
                       f"Every pysb-bpf policy size, for comparison (ratio, rounds slower): "
                       f"{'; '.join(others)}. What the check does: {reasons[op]}.")
        else:
            out.append(f"- {label}: missed by {(s.med - 1.05) * 100:.1f} points, and a real cost: "
                       f"slower than bare in {k} of {n} rounds (sign test p={p:.3f}), while the "
                       f"second bare loop sits at {pct(noise.med) if noise else '?'}; "
                       f"{added.med / 1000:,.1f} µs added per operation under TCG (median) on "
                       f"{r.bare_ns(op).med / 1000:,.1f} µs bare. The min-max range is wide "
                       f"({pct(s.lo)} to {pct(s.hi)}): a single round disturbed by the host "
                       f"(other VMs share its CPUs) stretches it; the median and the sign test "
                       f"are what to read. "
                       f"Why: {reasons[op]}.")
    if out:
        out = ["Why the misses:", ""] + out + [
            "", "Under TCG the BPF programs (JIT-compiled to x86) are emulated like the rest of "
            "the kernel, so the ratios are a fair first estimate of the relative cost on "
            "hardware, but not a measurement of it: the emulator's cost model differs (memory "
            "accesses and calls are relatively dearer than on a real CPU). No hardware "
            "measurement was possible here (the development machines' kernel refuses BPF LSM).",
            ""]
    return out


def why_startup(r, rep):
    st = rep.startup_stats(r)
    cmp_ = rep.startup_compare(r)
    if not cmp_ or all(ours < theirs for _, _, ours, theirs in cmp_):
        return []
    true = st.get("/bin/true", {})
    out = ["Why the start-up target is missed:", ""]
    pysb = binary_facts(r.meta.get("repo", ".") + "/build/pysb-bpf")
    bwrap = binary_facts("/usr/bin/bwrap")
    if "pysb-bpf help" in true and "pysb-bpf check" in true and "pysb" in true:
        h = true["pysb-bpf help"][2].med
        c = true["pysb-bpf check"][2].med
        run = true["pysb"][2].med
        out.append(f"Each against a bare `/bin/true` started just before it: starting the loader binary alone "
                   f"(`pysb-bpf help`) adds {h:+.0f} ms, parsing and compiling the start-up policy "
                   f"(`pysb-bpf check`) {c:+.0f} ms in all, and the whole `pysb-bpf run` {run:+.0f} "
                   f"ms. So, roughly:")
        out.append("")
        facts = ""
        if pysb and bwrap:
            facts = (f" `build/pysb-bpf` is {pysb[0]:,} KiB and loads {pysb[1]} shared "
                     f"{'library' if pysb[1] == 1 else 'libraries'} (libbpf, libelf, zlib and "
                     f"jansson are linked in; libsystemd and libmicrohttpd are opened by the "
                     f"daemon alone); `bwrap` is {bwrap[0]:,} KiB with {bwrap[1]}. Each is read "
                     f"through the VM's 9p root and relocated under emulation.")
        out.append(f"- about {h:.0f} ms: the loader's own process start.{facts}")
        out.append(f"- about {c - h:.0f} ms: the policy, and `check`'s report. `expose-ro=/` plus "
                   "the implicit paths (interpreter, libraries, locale, certificates...) are "
                   "resolved with `stat(2)` and directory reads, and `check` also describes each "
                   "file system the rules are on; in this VM each uncached lookup is a round "
                   "trip to the host over 9p, and code run once is translated by the emulator "
                   "before it runs. Natively the parser and compiler take milliseconds (see "
                   "\"Parse + compile\").")
        out.append(f"- about {run - c:.0f} ms: the sandbox itself (`run` does not print the "
                   "report: part of `check`'s figure is not in `run`'s). Per run, the loader "
                   "opens the pinned instance's maps (no BPF object is parsed once the programs "
                   "are pinned), takes a sandbox id with its ring buffer from the pool kept "
                   "across runs, creates the cgroup (the socket programs are attached once, "
                   "above every run's cgroup), opens and labels each rule path and writes the "
                   "rules in one batch, starts the program with `clone3(CLONE_INTO_CGROUP)`, "
                   "and at exit kills and removes the cgroup and deletes its entries. "
                   "`PYSB_BPF_TIMING=1 pysb-bpf run ...` prints each step's time.")
        out.append("")
    out.append("bwrap's cost is a few namespace and mount calls; firejail's a setuid binary "
               "that sets up namespaces and mounts and forks a monitor. pysb-bpf creates no "
               "namespace but does more work per start, most of it independent of the policy "
               "size. The cuts made so far: no BTF parsed once the programs are pinned and no "
               "libmicrohttpd loaded by `run` (0.4.0); no BPF object opened by a run, the ring "
               "buffers pooled, the socket programs attached once, the libraries linked in "
               "and the rules written in batches (0.6.0). What is left: the policy's path "
               "resolution and labelling (one open and one statfs a rule path), and the exit's "
               "clean-up, which the caller waits for.")
    out.append("")
    return out


def section_hot(r, rep, plots):
    h = rep.Hot(r)
    if not h.ok():
        return []
    m = r.meta
    depths = m.get("depths", [])
    o = ["## Hot paths: depth, the floor, a process in no sandbox (issue 17)", "",
         "Every ratio here is against the same loop with **no BPF program at all** attached, in "
         "the same round: pysb-bpf's instance is unpinned for that phase (its programs are "
         "global, so the unsandboxed loops of the other tables run with them attached). Each "
         f"round ({h.rounds} in this run) has four phases, forward in one round and backward "
         "in the next (a drift of the machine hits them alike over two rounds; pysb-bpf is "
         "loaded once per two rounds): nothing attached; the *empty programs* (tests/bench/floor.bpf.c: one program "
         "returning 0 on each hook an access check of these operations needs: `lsm/file_open`, "
         "`lsm/path_mknod`, `lsm/path_unlink`, and `cgroup/connect4`, `cgroup/sendmsg4` on the "
         "loops' parent cgroup); the same programs doing *one lookup* each (a hash map keyed by "
         "the task's cgroup id, as a sandbox lookup is): **the floor** of issue 17's targets; "
         "pysb-bpf loaded with two sandboxes running (1,000 file rules + 10 net, 10 file + "
         "1,000 net). The unsandboxed loops are the same processes in all four phases.", "",
         "The loops sit where a fair comparison needs them. The two bare loops: "
         f"`{m.get('bench_cgroup', 'CGROUP2/pysb-bench/LOOP')}`, a cgroup of their own at the "
         "depth of pysb-bpf's sandboxes (`CGROUP2/pysb-bpf/run-ID`), under a parent giving its "
         "children the controllers that `pysb-bpf/` gives its sandboxes; never the root "
         "cgroup, whose memory accounting is cheaper (issue 17 measured the child cgroup alone "
         "at +3 % on open, +13 % on create+unlink, +19 % on connect). The *level 3* loop: "
         f"`{m.get('service_cgroup', '?')}`, each level above it enabling the root's "
         "controllers, as systemd places a service with accounting on.", "",
         f"*Depth d*: the file is d levels below the directory its rule names (depth 1: "
         f"`RULE/file1`; depth {depths[-1] if depths else 'd'}: d - 1 directories between). "
         "Open reads `/tmp/pysb-bench/data/.../fileD` (rule `expose-ro=/tmp/pysb-bench/data`); "
         "create+unlink makes a file at the same depth below `expose-rw=/tmp/pysb-bench/rw`. "
         "The file of the per-syscall table above is at depth 5 in this counting "
         "(`data/a/b/c/d/file`; issue 17 calls it 6 levels, counting the rule's directory). "
         f"A pass: {m.get('hot_count', 0):,} opens or sendtos, half as many creates, an eighth "
         "as many connects, timed in 20 chunks (the fastest counts), as above.", "",
         rep.t_hot(r), "",
         "*pysb-bpf - floor* is the median over rounds of the difference of the two ratios "
         "within each round (points, i.e. per cent of the no-BPF time), with its min and max.", ""]
    if "bench-depth.png" in plots:
        o += ["![Depth sweep](bench-depth.png)", ""]
    o += ["### A process in no sandbox", "",
          "pysb-bpf's LSM programs are global: every process of the machine runs them, and a "
          "process in no sandbox pays for finding that out (one `sandboxes` lookup per level of "
          "its cgroup). The level-3 loop, in no sandbox, against itself with nothing attached, "
          "while the two sandboxes run elsewhere:", "", rep.t_unsandboxed(r), ""]
    if rep.stats_rows(r):
        o += ["### BPF run time per program (bpf_stats)", "",
              f"With `kernel.bpf_stats_enabled=1` ({m.get('stats_rounds', '?')} passes per "
              "operation and configuration, after the timed phases: the statistics cost time "
              "themselves), a snapshot of every program's `run_time_ns` and `run_cnt` "
              "(build/bench/bpf_floor stats, the fields `bpftool prog show --json` prints) right "
              "before and after a pass. *ns per call* = run time / calls, *calls per "
              "operation* = calls / operations of the pass; programs called less than once per "
              f"{int(1 / rep.STATS_MIN_CALLS)} operations are left out (other processes, the "
              "snapshots' own `bpf()` calls). The run time is the programs' own, without the "
              "trampoline that calls them; medians over passes:", "", rep.t_bpfstats(r), ""]
    return o


def section_method(r, rep):
    m = r.meta
    return [
        "## How it is measured", "",
        f"`make bench` runs `build/bench/bench_parse` natively, then `scripts/bench` inside ONE "
        f"VM (`scripts/vm-run`: Debian's kernel {m['kernel']} under QEMU TCG, {m['cpus']} "
        f"vCPUs; LSMs `{m['lsm']}`), which writes raw results to `build/bench-results/`, then "
        "`scripts/bench-report` renders this file and the plots on the host.", "",
        "- **Syscalls.** Each round starts `build/bench/syscall_loop -s` "
        "(tests/bench/syscall_loop.c) once per configuration, all at the same time, each under "
        "its sandbox; they wait on a pipe and take turns: for each operation, one pass in each "
        f"process, in an order that rotates every round ({m['rounds']} rounds). Fresh processes "
        "every round, so that what favours one process for its whole life (where ASLR put its "
        "code and stack, the size of its environment) varies between rounds instead of "
        "biasing all of them the same way. A pass is "
        f"{m['count']:,} operations "
        "(scaled per operation: stat and sendto x2, create /2, connect /8, fork+exec "
        f"{max(2, m['count'] * 3 // 1000)}) timed in 20 chunks; the fastest chunk gives the "
        "pass's time per operation (on a shared host interference only slows a chunk down). "
        "Between passes the driver pauses 50 ms, so the deferred work of one pass (RCU frees "
        "after unlink, exits of exec'd children) is not timed in the next. A ratio compares "
        "a pass with the bare passes of the same round, seconds apart: two unsandboxed loops "
        "run in every round, the baseline is the geometric mean of their two times (half "
        "the noise of one), and the second compared with the first is the noise floor shown "
        "in the tables. Each figure is the median of the rounds' ratios (min-max). The sandboxes exist side by side, as on a "
        "machine running several: the maps hold all their rules at once.",
        "- **The peer of connect and sendto** is `syscall_loop serve PORT`, started outside "
        "every sandbox: it accepts and closes TCP connections (every 5 ms, whatever arrived: a "
        "wake-up per connection would be timed as part of connect) and binds the UDP port "
        "without reading it. Connections close with RST (SO_LINGER 0), so no TIME_WAIT "
        "piles up. The policies allow both with `net=ALLOW|tcp|127.0.0.1|PORT|OUT` and "
        "`net=ALLOW|udp|127.0.0.1|PORT|OUT`.",
        "- **Policies.** *N file rules*: N `expose-ro=`/`expose-rw=` lines: the loop's data "
        "and scratch directories, its own directory, `/usr/bin`, and directories created "
        "for the purpose; plus 10 `net=` lines. *N net rules*: N `net=` lines (the two the "
        "loop needs, `/32` hosts in 10/8 on port 443, and hosts of 127/8 on other ports, so "
        "the trie grows around the target) plus 10 file lines. Each also has "
        "`python-api=ALLOW:process-exec` and the implicit paths (docs/policy.md).",
        "- **Bare**, in the per-syscall and scaling tables, runs with pysb-bpf's programs "
        "attached (they are global, pinned at the first run): an unsandboxed task pays one "
        "sandbox lookup per level of its cgroup per hook and returns. That is the baseline for "
        "*sandboxed / unsandboxed on a machine running pysb-bpf*; the hot-path section "
        "compares with no BPF program at all. Every unsandboxed loop (bare, bwrap, firejail, "
        "firejail + Landlock) runs in a cgroup of its own at the depth of pysb-bpf's "
        f"sandboxes: `{m.get('bench_cgroup', 'CGROUP2/pysb-bench/LOOP')}` next to "
        "`CGROUP2/pysb-bpf/run-ID`, its parent enabling the same controllers for its children "
        "as `pysb-bpf/` does (the root cgroup would make the baseline cheaper: its memory "
        "accounting is).",
        f"- **Start-up**: each sandboxed start runs right after a bare start of the same "
        f"program, {m['startup_rounds']} pairs per configuration, order rotating; figures are "
        "medians of the pairs' differences and ratios.",
        "- **Events**: a Python program creates N/2 files outside its policy, each a create "
        "and an open would-be denial (as tests/e2e does), under `--audit` and `--learn` with "
        "the JSON stream to a file; events counted from the stream, lost ones from the "
        "summary record (per reason).",
        "- **Memory**: peak RSS of `pysb-bpf run` from `getrusage(RUSAGE_CHILDREN)` of its "
        "parent (its child, /bin/true, is smaller); map entries counted with `bpftool map "
        "dump` with no sandbox and while one sandbox runs (its program blocks on a FIFO until "
        "the count is taken); bytes per entry from the kernel's own struct sizes (BTF).",
        "",
    ]


def section_commands(r):
    cmds = r.d.get("commands", {})
    m = r.meta
    lines = ["## The exact commands", "",
             f"Run from the repository root (`{m.get('repo')}`) as root in the VM; "
             f"`{m.get('scratch')}` is a scratch tree on the guest's tmpfs, the policies are "
             f"`{m.get('scratch')}/policy-*`, generated by scripts/bench.", "", "```text",
             "build/bench/bench_parse -b build/pysb-bpf        # natively, before the VM"]
    lines += [f"# {k}\n{v}" for k, v in cmds.items()]
    lines += ["```", ""]
    return lines


def render(r, rep, plots):
    m = r.meta
    o = ["# Benchmarks", "",
         "What pysb-bpf costs, measured by `make bench` side by side with Debian 12's "
         f"bubblewrap ({m.get('bwrap', '?')}) and firejail ({m.get('firejail', '?')}) in one "
         "run of the test VM. This file and the plots are generated "
         "(`scripts/bench-report`, prose in `scripts/bench_doc.py`); verdicts and "
         "explanations are recomputed from each run.", "",
         f"This run: {m['date']}, kernel {m['kernel']} under QEMU TCG ({m['cpus']} vCPUs), "
         f"{m['rounds']} rounds of the syscall loops, {m['startup_rounds']} start-up pairs; "
         + (f"{m['total_s']} s inside the VM. " if "total_s" in m else "")
         + "Every figure is a median over rounds, with its min and max.", "",
         "**Read ratios only.** TCG emulates every instruction: absolute times are many times "
         "those of real hardware and move with the host's load (other VMs share its two "
         "CPUs). Only ratios taken within the run mean anything, and each table shows how "
         "much they move when nothing differs (the second bare loop).", ""]
    o += section_targets(r, rep)
    o += why_overhead(r, rep)
    o += why_startup(r, rep)
    if r.sc:
        o += ["## Per-syscall overhead", "",
              "Time per operation, sandboxed / bare in the same round. *10+10 rules*: 10 file "
              "and 10 net rules; *1,000 rules*: 1,000 file rules for the file operations and "
              "exec, 1,000 net rules for connect and sendto. `bare, ns/op` is the absolute "
              "time under TCG, for scale only.", "", rep.t_overhead(r), "",
              "The min-max ranges are wide when other VMs share the host during part of the "
              "run. A steady effect shows better in how many rounds each configuration was "
              "slower than bare (the two passes seconds apart): with no effect that is a coin "
              "toss. The sign test's p is shown where it is below 0.05 (with 36 cells, one "
              "or two such cells are expected by chance alone):", "", rep.t_signs(r), ""]
        if "bench-overhead.png" in plots:
            o += ["![Per-syscall ratios](bench-overhead.png)", ""]
        o += ["What each sandbox checks on these operations (kernel 6.1):", "",
              rep.table(["", "open", "stat", "create+unlink", "connect", "sendto", "fork+exec"], [
                  ["pysb-bpf", "file_open: path walk", "nothing (no rule hides metadata)",
                   "path_mknod, file_open, path_unlink: path walks", "socket_create, cgroup/connect4",
                   "cgroup/sendmsg4", "task_alloc, bprm_check, file_open and mmap_file walks"],
                  ["bwrap, firejail", "nothing per call: mount namespace", "nothing", "nothing",
                   "nothing (shared network namespace)", "nothing", "nothing"],
                  ["+ Landlock (ABI 2 on 6.1)", "path walk", "nothing (no hook)", "path walks",
                   "nothing (TCP rules need ABI 4, Linux 6.7)", "nothing", "path walks"]]), "",
              "bwrap and firejail enforce by building a different view (namespaces) once, so "
              "their per-call ratios are the noise floor plus whatever the mount namespace "
              "changes in path lookup. Landlock, like pysb-bpf, checks at each call.", "",
              "Debian 12's firejail 0.9.72 has no Landlock options: a first version was merged "
              "in 2022 (netblue30/firejail #5315) but is not in the 0.9.72 release (its "
              "RELNOTES do not list it, `firejail --help` and the binary have no trace of it); "
              "Landlock support came back in later releases as `--landlock.enforce "
              "--landlock.fs.read=... --landlock.fs.write=...` (#6078). The *firejail + "
              "Landlock* column therefore runs "
              "`firejail --noprofile --quiet build/bench/landlock_run -r / -w RW -- LOOP`: "
              "tests/bench/landlock_run.c applies the ruleset those options describe (every "
              "file-system right of the kernel's Landlock ABI handled; read and execute "
              "beneath `/`, everything beneath the loop's scratch directory), then execs. "
              "Landlock is in the VM kernel's LSM list (above); `scripts/vm-run` needed no "
              "change.", ""]
        o += ["## Scaling with the number of rules", "",
              "Time / bare per policy size (same round). File rules are a hash map keyed by "
              "inode: a check costs one lookup per path level whatever the number of rules. "
              "Net rules are an LPM trie keyed by (sandbox, address): a lookup is bounded by "
              "the key length, not the rule count.", "", rep.t_scaling(r), "",
              "The slope, as the ratio of the largest to the smallest policy within each "
              "round (a drift of the machine cancels out). A slope counts as measured when the "
              "larger policy was the slower (or the faster) one in more rounds than chance "
              "allows: sign test at 5 %, divided by the number of slopes tested together "
              "(Bonferroni), since each extra test is another chance of a false alarm:", "",
              rep.t_slopes(r), ""]
        sl = rep.slopes(r)
        if sl:
            worst = max(abs(s.med - 1) for _, _, s in sl)
            o += [f"The resolution of this run: the medians of these ratios lie within "
                  f"{worst * 100:.0f} % of 1, so a slope smaller than that would not show."]
            leans = [(what, op, s) for what, op, s in sl
                     if rep.sign_test(s.v)[2] < 0.05 and not rep.slope_measurable(s, len(sl))]
            for what, op, s in leans:
                k, n, p = rep.sign_test(s.v)
                o[-1] += (f" {rep.OP_LABEL[op]} ({what}) leans {'up' if k > n / 2 else 'down'} "
                          f"(x{s.med:.3f}, p={p:.3f} uncorrected): "
                          + ("cheaper with more rules, which the design cannot produce (a hash "
                             "lookup per level, whatever the table size), so read it as the one "
                             "false alarm in six tests that chance allows."
                             if k < n / 2 else "below the corrected threshold; a longer run "
                             "(BENCH_ROUNDS) would settle it."))
            o.append("")
        if "bench-scaling.png" in plots:
            o += ["![Scaling](bench-scaling.png)", ""]
    o += section_hot(r, rep, plots)
    if r.d.get("startup"):
        o += ["## Start-up", "",
              "`python3 -c pass` and `/bin/true`, bare and under each sandbox, with an "
              "equivalent read-only view: `bwrap --ro-bind / / --dev /dev --proc /proc`, "
              "`firejail --noprofile --quiet`, and for pysb-bpf the policy `expose-ro=/`, "
              "`env=HOME=${HOME}`, `env=PATH=${PATH}` (pysb-bpf starts programs with an empty "
              "environment). The two parenthesised rows split pysb-bpf's own cost: the loader's "
              "start, then the policy's parse and compile.",
              "", rep.t_startup(r), ""]
        if "first_run_s" in m:
            o += [f"Not in the table: the first `pysb-bpf run` after boot loads, verifies, "
                  f"attaches and pins the programs, once: {m['first_run_s']} s in this run "
                  "(measured once).", ""]
        if "bench-startup.png" in plots:
            o += ["![Start-up](bench-startup.png)", ""]
    if r.d.get("events"):
        o += ["## Events", "", rep.t_events(r), "",
              "Audit mode uses the default 4 MiB ring buffer per sandbox, learning mode 64 MiB "
              "(`bpf.events-buffer`). A flood faster than the reader fills the smaller one: the "
              "events that do not fit are counted per reason and reported (summary record, "
              "stderr), never dropped silently. The rate is bounded by the flood program "
              "itself (Python creating files under TCG), not by the event pipeline: read it "
              "as \"keeps up with\", not as a ceiling. The consumer's own ceiling is the "
              "target below: the same flood's records held in a 64 MiB ring while the program "
              "runs, then drained once it has exited (`PYSB_BENCH_EVENTS=hold`: each record "
              "decoded, resolved, deduplicated, written as a JSON line), against a drain of "
              "the same ring that only counts them (`=bare`).", ""]
    if r.d.get("memory"):
        p = rep.per_1000(r)
        o += ["## Memory", "", "Peak RSS of the loader (`pysb-bpf run ... -- /bin/true`):", "",
              rep.t_rss(r), "",
              "BPF maps, as the pinned instance holds them with no sandbox running. "
              "Preallocated hash maps reserve all their elements at load (bpftool's "
              "`memlock` on 6.1 is only key + value x max entries, not the kernel's element "
              "size); the others allocate per entry:", "", rep.t_maps(r), "",
              "What one running sandbox adds (entries counted before and while it runs):", "",
              rep.t_added(r), ""]
        if p:
            o += ["Per 1,000 rules (difference between the largest and smallest policy, "
                  "entries x element size, allocator rounding not counted): " + ", ".join(
                      f"**{v / 1024:,.0f} KiB per 1,000 {k} rules**" for k, v in p.items())
                  + ". File rules go into preallocated `file_rules`, so they use memory "
                  "already reserved (65,536 entries shared by all sandboxes) rather than "
                  "new memory; net rules allocate LPM nodes and port sets as they are "
                  "added. Each sandbox also has its own ring buffer (table above).", ""]
    if r.parse:
        o += ["## Parse + compile", "",
              "`build/bench/bench_parse -b build/pysb-bpf` (tests/bench/bench_parse.c), natively "
              "on the build machine (no BPF involved), a generated 10,000-rule policy:", "",
              "```text", r.parse, "```", ""]
    o += section_method(r, rep)
    o += section_commands(r)
    # Marked for the docs test (scripts/doc-examples), which skips them: make bench boots
    # its own VM and takes minutes.
    o += ["## Regenerating", "",
          "<!-- doc-test skip: make bench boots its own VM and runs for minutes -->",
          "```console",
          "$ make bench                                    # everything (see below for the time)",
          "$ BENCH_ROUNDS=25 BENCH_COUNT=4000 make bench   # tighter medians, longer",
          "$ BENCH_ONLY=syscall,startup make bench         # some sections only (partial report)",
          "$ BENCH_ONLY=hotpath BENCH_HOT_ROUNDS=12 make bench  # issue 17's targets only",
          "$ scripts/bench-report build/bench-results docs # re-render from the last raw results",
          "$ scripts/bench-report --print build/bench-results",
          "```", "",
          (f"`make bench` took about {round((m['total_s'] + 45) / 60)} minutes for the run above "
           f"({m['total_s']} s inside the VM, plus about 45 s of boot, bench_parse and "
           "rendering); it varies with what else runs on this 2-CPU machine. "
           if "total_s" in m else "") +
          "The defaults (10 syscall rounds, 6 hot-path rounds) keep it near 8 to 10 minutes on a "
          "quiet machine; the hot-path rounds cost most in loading and unloading pysb-bpf "
          "(about 25 s per two rounds under TCG). "
          "Knobs (scripts/bench lists them): `BENCH_COUNT`, `BENCH_ROUNDS`, "
          "`BENCH_STARTUP_ROUNDS`, `BENCH_EVENTS`, `BENCH_MEM_ROUNDS`, `BENCH_FILE_RULES`, "
          "`BENCH_NET_RULES`, `BENCH_PORT`, `BENCH_HOT_ROUNDS`, `BENCH_HOT_COUNT`, "
          "`BENCH_DEPTHS`, `BENCH_STATS_ROUNDS`, `BENCH_ONLY`; `BENCH_ARGS` for bench_parse; "
          "`BENCH_TIMEOUT` for the VM. `scripts/bench-net` remains as a focused connect() "
          "benchmark (UDP connect, 10 vs 1,000 rules).", ""]
    sk = r.d.get("skipped", {})
    if sk:
        o += ["## Not measured in this run", ""] + [f"- {k}: {v}" for k, v in sk.items()] + [""]
    return "\n".join(o)
