/* SPDX-License-Identifier: MIT */
/*
 * A sandbox's set-up (steps 1 to 4 of runner.c's order), in two parts:
 *   - the kernel's, which needs no policy: the cgroup, the pinned instance, a sandbox id
 *     with its ring buffer, the socket programs above the cgroup (kernel_prepare);
 *   - the policy's: its rules in the maps, then the switch in `sandboxes` (policy_finish).
 * `run` does the first on a thread of its own while the policy is compiled
 * (sandbox_prep_start); nothing runs in the cgroup before the second is done. Also what
 * follows the program's start off its path: its status record and the gc.
 */
#include <pthread.h>

#include "runner_int.h"
#include "drivers.h"

/* What `pysb-bpf status` tells of this sandbox (user/kernel/status.c): written before an
 * attached cgroup is registered; a run's once its program has started (off its start). */
void write_record(const struct run_opts *o, const struct sandbox_cgroup *cg,
		  const struct pysb_sandbox_cfg *cfg, enum sandbox_owner owner, pid_t target)
{
	struct sandbox_record r = {
		.cgid = cg->id, .sandbox = cfg->id, .owner = owner, .target = target
	};

	sandbox_record_self(&r);
	if (!o->policy || !realpath(o->policy, r.policy))
		snprintf(r.policy, sizeof(r.policy), "%s", o->policy ? o->policy : "");
	snprintf(r.mode, sizeof(r.mode), "%s", o->learn ? "learn" : o->audit ? "audit" : "enforce");
	snprintf(r.cgroup, sizeof(r.cgroup), "%s", cg->path);
	sandbox_record_write(&r);
}

/*
 * A cgroup file the caller passes on open for writing (`3>/sys/fs/cgroup/cgroup.procs`):
 * a write to it moves the writer to that cgroup, out of its sandbox, and no hook sees
 * either the write or the move (found by an adversary). Refused, never closed silently.
 */
int refuse_inherited_cgroup_file(void)
{
	char path[PATH_MAX];
	int fd = inherited_cgroup_file(path, sizeof(path));

	if (fd < 0)
		return 0;
	pr_err("cannot run the program: descriptor %d, which it would inherit, is a cgroup file "
	       "open for writing (%s), through which it could move itself out of its sandbox; "
	       "close it (%d>&-) or open it with O_CLOEXEC",
	       fd, path, fd);
	return -1;
}

/* A granted capability pysb-bpf does not hold itself cannot be handed on: said once. */
static void caps_check_granted(const struct run_opts *o)
{
	uint64_t missing = o->compiled->caps & ~caps_permitted();
	char have[512], lack[512];

	pr_info("capabilities the policy grants: %s%s",
		caps_str(o->compiled->caps, have, sizeof(have)),
		o->audit ? " (audit: the program keeps its own; each other one used is reported)"
			 : "");
	if (missing)
		pr_warn("bpf.capabilities grants %s, which pysb-bpf does not hold itself: the "
			"program will not have %s",
			caps_str(missing, lack, sizeof(lack)),
			__builtin_popcountll(missing) > 1 ? "them" : "it");
}

/* Forgets the sandboxes of runs whose pysb-bpf died and whose cgroup is gone: after the
 * program has started, off the path to its first instruction. */
void sandbox_gc(struct loader *l)
{
	uint64_t alive[PYSB_MAX_SANDBOXES];
	size_t n_alive;

	if (!sandbox_cgroup_gc(alive, &n_alive, PYSB_MAX_SANDBOXES))
		loader_gc(l, alive, n_alive);
}

/* The keys a run before under the same id left in event_dedup (killed before its end),
 * removed before this sandbox's program starts; the map is read only if any is counted. */
void sandbox_dedup_clear(struct loader *l, uint32_t id)
{
	int n = loader_dedup_held(l, id) ? events_dedup_clear(loader_dedup_fd(l), id) : 0;

	if (n > 0)
		loader_dedup_deleted(l, id, (uint32_t)n);
}

/* Undoes kernel_prepare: the cgroup first (nothing of it may outlive its sandbox), then
 * the sandbox id, then this process's references to the instance. An id still clean that
 * no fill has touched (`filling` false: a run cancelled before its rules) is let go
 * without looking for its entries in every rule map, and without bumping the generation;
 * after a fill that failed half way (a full map) its entries are looked for and removed,
 * or the next run taking the id would inherit them. */
static void kernel_undo(struct sandbox_cgroup *cg, struct loader *l, uint32_t id, bool filling)
{
	if (sandbox_cgroup_destroy(cg) == 0 && id) {
		if (!filling && l->id_clean && l->sandbox_id == id)
			loader_sandbox_free_gone(l, id);
		else
			loader_sandbox_free(l, cg->id, id);
	}
	loader_stop(l);
}

/* The sandbox cgroup "run-<random>" (sandbox_cgroup_create_run), the instance open, a
 * sandbox id with a ring of `ring_bytes` (0: the default) in *id, the socket programs
 * attached above the cgroup. On failure everything is undone and -1 returned after
 * saying what failed. */
static int kernel_prepare(struct sandbox_cgroup *cg, struct loader *l, uint32_t *id,
			  uint32_t ring_bytes)
{
	const char *what;
	int err;

	/* the kernel's checks, unless its own pinned instance already answered them */
	if (!loader_pinned() && probe_run(0))
		return -1;
	stopwatch("probe");
	/* The programs first: the first load after boot takes seconds (minutes under
	 * emulation), and a ^C then must leave no cgroup behind (found by a user: an
	 * orphan run-* cgroup that `status` did not show). */
	if (loader_start(l, &what, &err)) {
		probe_report_load_failure(what, err, false);
		return -1;
	}
	stopwatch("loader_start");
	if (sandbox_cgroup_create_run(cg)) {
		loader_stop(l);
		return -1;
	}
	stopwatch("cgroup created");
	if (log_level >= LOG_INFO) {
		char hooks[4096];
		int n = loader_hooks(l, hooks, sizeof(hooks));

		pr_info("cgroup %s (id %llu)", cg->path, (unsigned long long)cg->id);
		pr_info("%d BPF programs attached (no lsm_cgroup slot used): %s", n, hooks);
		loader_print_maps(l);
	}
	err = loader_sandbox_alloc(l, id, ring_bytes);
	if (err) {
		pr_err("cannot register a new sandbox: %s%s", strerror(-err),
		       err == -ENOSPC ? " (all sandbox slots in use)" : "");
		goto fail;
	}
	pr_info("sandbox %u: its event ring buffer holds %u bytes", *id,
		ring_bytes ? ring_bytes : PYSB_RINGBUF_BYTES);
	stopwatch("sandbox_alloc");
	/* Attached once to the parent of every run cgroup; they find the sandbox by the
	 * task's cgroup, as the lsm/ programs do. */
	err = loader_attach_runs(l, cg->path);
	if (err) {
		pr_err("cannot attach the socket programs above cgroup %s: %s", cg->path,
		       strerror(-err));
		goto fail;
	}
	stopwatch("attach cgroup");
	return 0;
fail:
	kernel_undo(cg, l, *id, false);
	return -1;
}

/* The policy's part: its rules in the maps, then the cgroup registered as the sandbox
 * (the switch). On failure everything kernel_prepare did is undone too. */
static int policy_finish(const struct run_opts *o, struct sandbox_cgroup *cg, struct loader *l,
			 struct pysb_sandbox_cfg *cfg, enum sandbox_owner owner, pid_t target)
{
	int err;

	cfg->flags = sandbox_flags(o->compiled, o->audit) |
		     (owner != OWNER_RUN ? PYSB_SB_INPLACE : 0);
	cfg->caps = o->compiled->caps;
	caps_check_granted(o);
	pr_info("%zu file rules; mode %s", o->compiled->n_files, o->audit ? "audit" : "enforce");
	/* The rule paths stay open as long as this process, the sandbox's keeper, lives. */
	getrlimit(RLIMIT_NOFILE, &program_nofile);
	if (sandbox_fill_maps(l, o->compiled, &rule_pins, cfg->id))
		goto fail;
	stopwatch("fill maps");
	err = cfg->flags & PYSB_SB_INPLACE ? loader_inplace_hooks(l) : 0;
	if (err) {
		pr_err("cannot attach the programs of a sandbox confined in place: %s",
		       strerror(-err));
		goto fail;
	}
	if (owner != OWNER_RUN) /* a run's: once its program runs (write_record) */
		write_record(o, cg, cfg, owner, target);
	err = loader_add_sandbox(l, cg->id, cfg);
	if (err) {
		pr_err("cannot register cgroup %s as a sandbox: %s", cg->path, strerror(-err));
		sandbox_record_remove(cg->id);
		goto fail;
	}
	stopwatch("add sandbox");
	return 0;
fail:
	kernel_undo(cg, l, cfg->id, true);
	return -1;
}

/* The sandbox cgroup "run-<random>" (sandbox_cgroup_create_run), registered and confined with
 * o->compiled's rules: the state sandbox_run and sandbox_attach start from. On failure
 * everything is undone and -1 returned after saying what failed. `owner` and `target`
 * are for status. */
int sandbox_setup(const struct run_opts *o, struct sandbox_cgroup *cg, struct loader *l,
		  struct pysb_sandbox_cfg *cfg, enum sandbox_owner owner, pid_t target)
{
	if (kernel_prepare(cg, l, &cfg->id, o->ringbuf_bytes))
		return -1;
	return policy_finish(o, cg, l, cfg, owner, target);
}

/* ---------------- the kernel's part on a thread, while the policy compiles */

/* The kernel's part of a run, done by a thread of its own while the policy compiles. */
struct sandbox_prep {
	pthread_t thread;
	uint32_t ring_bytes; /* asked for: the policy may want another size */
	int ret;	     /* kernel_prepare's */
	struct sandbox_cgroup cg;
	struct loader l;
	uint32_t id;
};

static void *prep_thread(void *arg)
{
	struct sandbox_prep *sp = arg;

	sp->ret = kernel_prepare(&sp->cg, &sp->l, &sp->id, sp->ring_bytes);
	return NULL;
}

struct sandbox_prep *sandbox_prep_start(uint32_t ring_bytes)
{
	struct sandbox_prep *sp;

	/* Not before the first run since boot has loaded and pinned the programs: a policy
	 * error would wait for that load. */
	if (!loader_pinned())
		return NULL;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	sp->cg.fd = -1;
	sp->ring_bytes = ring_bytes;
	if (pthread_create(&sp->thread, NULL, prep_thread, sp)) {
		free(sp);
		return NULL; /* the run does it all in its turn */
	}
	return sp;
}

/* The thread's result, and `sp` freed: 0 with the kernel's part in *cg, *l, *id; -1 when
 * it failed (said and undone). */
static int prep_join(struct sandbox_prep *sp, struct sandbox_cgroup *cg, struct loader *l,
		     uint32_t *id, uint32_t *ring_bytes)
{
	int ret;

	pthread_join(sp->thread, NULL);
	ret = sp->ret;
	*cg = sp->cg;
	*l = sp->l;
	*id = sp->id;
	*ring_bytes = sp->ring_bytes;
	free(sp);
	return ret;
}

void sandbox_prep_cancel(struct sandbox_prep *sp)
{
	struct sandbox_cgroup cg;
	struct loader l;
	uint32_t id, ring_bytes;

	if (sp && !prep_join(sp, &cg, &l, &id, &ring_bytes))
		kernel_undo(&cg, &l, id, false);
}

int sandbox_prep_finish(struct sandbox_prep *sp, const struct run_opts *o,
			struct sandbox_cgroup *cg, struct loader *l, struct pysb_sandbox_cfg *cfg)
{
	uint32_t ring_bytes;

	if (!sp)
		return sandbox_setup(o, cg, l, cfg, OWNER_RUN, 0);
	if (prep_join(sp, cg, l, &cfg->id, &ring_bytes))
		return -1;
	if (ring_bytes != o->ringbuf_bytes) {
		/* the policy's own size (bpf.events-buffer): the set-up again, with its ring */
		kernel_undo(cg, l, cfg->id, false);
		*cg = (struct sandbox_cgroup){ .fd = -1 };
		*l = (struct loader){ 0 };
		cfg->id = 0;
		return sandbox_setup(o, cg, l, cfg, OWNER_RUN, 0);
	}
	return policy_finish(o, cg, l, cfg, OWNER_RUN, 0);
}

/* ---------------- after the program's start, beside it */

static void *after_start(void *arg)
{
	struct after_start *a = arg;

	/* (a program shorter than this thread's start, /bin/true, waits for none of it) */
	if (!__atomic_load_n(&a->ended, __ATOMIC_ACQUIRE))
		write_record(a->o, a->cg, a->cfg, OWNER_RUN, 0);
	stopwatch("after start: record written");
	sandbox_gc(a->l);
	stopwatch("after start: gc");
	return NULL;
}

void sandbox_after_start(struct after_start *a)
{
	a->started = !pthread_create(&a->thread, NULL, after_start, a);
	if (!a->started)
		after_start(a);
}

void sandbox_after_start_join(struct after_start *a)
{
	__atomic_store_n(&a->ended, true, __ATOMIC_RELEASE);
	if (a->started)
		pthread_join(a->thread, NULL);
	a->started = false;
}
