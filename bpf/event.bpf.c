/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The out-of-line parts of an event record (bpf/common.bpf.h, event_start and
 * event_send; bpf/path.bpf.h, event_set_dentry_path): global functions, which the
 * verifier checks once per program, on their own, whatever number of denials a program
 * reports. Each holds a bpf_loop: since 6.7 the verifier checks a callback as a loop, at
 * every call site of the code around it, until its states converge. When the naming of a
 * path was inlined in each denial, that cost 7.2's verifier 840,000 of the 880,000
 * instructions it checked for lsm/file_ioctl (one short of its million with the globals
 * around it), and two minutes of every first load under emulation. No hook of its own.
 *
 * A global function takes no kernel pointer and gives none back: the event buffer comes
 * in as memory of its known size (the per-CPU map value event_start took), the dentry and
 * mount as numbers, read with probe reads as before.
 */
#include "path.bpf.h"

static long event_buf_try(__u32 n, void *data)
{
	__u32 key = 2 * n, *taken = data;
	struct pysb_event_buf *b = bpf_map_lookup_elem(&event_buf, &key);

	if (!b)
		return 1;
	if (__sync_lock_test_and_set(&b->busy, 1))
		return 0;
	*taken = n;
	return 1;
}

/* The search of this CPU's pairs in a bpf_loop: one try verified. */
__noinline int pysb_event_buf_take(void)
{
	__u32 n = PYSB_EVENT_NEST;

	bpf_loop(PYSB_EVENT_NEST, event_buf_try, &n, 0);
	return n < PYSB_EVENT_NEST ? (int)n : -1;
}

struct name_ctx {
	struct pysb_event *e;
	struct dentry *d;
	struct vfsmount *mnt;
	__u32 pos; /* the path so far is e->path[pos .. PYSB_PATH_LEN - 1] */
};

static long name_step(__u32 index, void *data)
{
	struct name_ctx *c = data;
	struct pysb_event *e = c->e;
	struct dentry *d = c->d;
	struct vfsmount *mnt = c->mnt;
	const unsigned char *name;
	struct dentry *parent;
	__u32 len, pos = c->pos;

	if (mnt && d == BPF_CORE_READ(mnt, mnt_root)) {
		struct mount *m = real_mount(mnt);
		struct mount *up = BPF_CORE_READ(m, mnt_parent);

		if (up == m)
			return 1;
		c->d = BPF_CORE_READ(m, mnt_mountpoint);
		c->mnt = (struct vfsmount *)((void *)up + bpf_core_field_offset(struct mount, mnt));
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (parent == d)
		return 1;
	len = BPF_CORE_READ(d, d_name.len);
	name = BPF_CORE_READ(d, d_name.name);
	if (len > 255 || len + 1 > pos || pos >= PYSB_PATH_LEN) {
		e->flags |= PYSB_EV_PATH_TRUNC;
		return 1;
	}
	pos -= len;
	/* up to 255 bytes past e->path's end: into the buffer's slack */
	bpf_probe_read_kernel(&e->path[pos & (PYSB_PATH_LEN - 1)], len & 255, name);
	pos -= 1;
	e->path[pos & (PYSB_PATH_LEN - 1)] = '/';
	c->pos = pos;
	c->d = parent;
	return 0;
}

/*
 * Writes the path of b->name_d (on b->name_mnt, or up to its file system's root when that
 * is 0) into the event of buffer b, backwards from the end of e->path: e->path +
 * e->path_off is the result. For hooks where bpf_d_path() is not allowed, and for
 * negative dentries (files about to be created). A path longer than the buffer is cut at
 * the front and the event flagged PYSB_EV_PATH_TRUNC.
 */
__noinline int pysb_event_path(struct pysb_event_buf *b)
{
	struct name_ctx c = { .pos = PYSB_PATH_LEN - 1 };
	struct pysb_event *e;
	struct dentry *d;

	if (!b)
		return 0;
	e = &b->e;
	c.e = e;
	c.d = (struct dentry *)b->name_d;
	c.mnt = (struct vfsmount *)b->name_mnt;
	e->path[PYSB_PATH_LEN - 1] = '\0';
	if (!c.mnt) {
		e->flags |= PYSB_EV_PATH_FSROOT;
		d = c.d; /* a plain variable: CO-RE would relocate c.d's own field too */
		e->dev = BPF_CORE_READ(d, d_sb, s_dev);
	}
	bpf_loop(PYSB_MAX_DEPTH, name_step, &c, 0);
	if (c.pos == PYSB_PATH_LEN - 1) {
		c.pos -= 1;
		e->path[PYSB_PATH_LEN - 2] = '/';
	}
	e->path_off = c.pos;
	e->path_len = PYSB_PATH_LEN - c.pos;
	return 0;
}

#define PYSB_EVENT_HEAD __builtin_offsetof(struct pysb_event, path)

struct dedup_hash_ctx {
	const char *p;
	__u64 h;
};

static long dedup_hash_word(__u32 i, void *data)
{
	struct dedup_hash_ctx *c = data;

	c->h = (c->h ^ *(const __u64 *)(c->p + ((i * 8) & (PYSB_PATH_LEN - 8)))) * 0x100000001b3ull;
	return 0;
}

/* FNV-1a over the first `len` bytes of p, a word at a time, then the last bytes (those
 * of their word beyond len masked: the buffer holds an older event's bytes there). The
 * words in a bpf_loop: the verifier checks its body once, where a loop of 512 words was
 * walked word by word at each event_send call of each program (a third of the
 * instructions it checked for most hooks). */
static __always_inline __u64 dedup_hash(const char *p, __u32 len)
{
	struct dedup_hash_ctx c = { .p = p, .h = 0xcbf29ce484222325ull };
	__u32 rem = len & 7, off;
	__u64 w;

	if (len > PYSB_PATH_LEN)
		len = PYSB_PATH_LEN;
	bpf_loop(len / 8, dedup_hash_word, &c, 0);
	if (rem) {
		off = (len - rem) & (PYSB_PATH_LEN - 8);
		w = *(const __u64 *)(p + off) & ((1ull << (rem * 8)) - 1);
		c.h = (c.h ^ w) * 0x100000001b3ull;
	}
	return c.h;
}

/*
 * Copies the event into its sandbox's ring buffer at its real size (the path moved to
 * the front: path_off is 0 in what user space reads) and frees this CPU's buffer. A
 * repeat of an event sent less than PYSB_DEDUP_INTERVAL_NS ago is only counted in
 * `event_dedup` (include/pysb_abi.h, struct pysb_dedup_key): the next record of its
 * key, or user space reading the map, tells it.
 */
__noinline int pysb_event_send(struct pysb_event_buf *b)
{
	struct pysb_event *e;
	struct pysb_event_buf *out;
	struct pysb_dedup_key *k;
	struct pysb_dedup_val *v;
	__u32 pair, sandbox, hlen = sizeof(struct pysb_net_event);
	__u64 size = PYSB_EVENT_HEAD + sizeof(struct pysb_net_event), idx, last, now;
	void *rb;

	if (!b)
		return 0;
	e = &b->e;
	pair = 2 * (b->pair & (PYSB_EVENT_NEST - 1)) + 1;
	sandbox = e->sandbox; /* a key from the stack: 6.1 takes none from memory */
	rb = bpf_map_lookup_elem(&events, &sandbox);
	out = bpf_map_lookup_elem(&event_buf, &pair);
	if (!rb || !out) {
		count_lost(e->sandbox, PYSB_LOST_NO_READER);
		goto done;
	}
	__builtin_memcpy(&out->e, e, PYSB_EVENT_HEAD);
	if (e->kind == PYSB_KIND_NET) {
		__builtin_memcpy(&out->e.net, &e->net, sizeof(e->net));
	} else {
		__u32 len = e->path_len > 0 ? e->path_len : 0;
		__u32 off = e->path_off;

		if (len > PYSB_PATH_LEN)
			len = PYSB_PATH_LEN;
		off &= PYSB_PATH_LEN - 1;
		out->e.path_off = 0;
		out->e.path[0] = '\0';
		if (len)
			bpf_probe_read_kernel(out->e.path, len, e->path + off);
		size = PYSB_EVENT_HEAD + (len ? len : 1);
		hlen = len;
	}
	k = &out->dkey;
	pysb_dedup_key_fields(k, e);
	k->hash = dedup_hash(out->e.path, hlen);
	out->e.key_hash = k->hash;
	out->e.seq = 0;
	v = bpf_map_lookup_elem(&event_dedup, k);
	if (!v) {
		__builtin_memset(&out->dval, 0, sizeof(out->dval));
		/* counted first (owner_records); full, or created meanwhile by another CPU:
		 * the count taken back, looked up again */
		owner_count(PYSB_OWNER_DEDUP, sandbox, 1);
		if (bpf_map_update_elem(&event_dedup, k, &out->dval, BPF_NOEXIST))
			owner_count(PYSB_OWNER_DEDUP, sandbox, -1);
		v = bpf_map_lookup_elem(&event_dedup, k);
	}
	if (!v) { /* the map is full: the event is sent itself */
		if (bpf_ringbuf_output(rb, &out->e, size, 0))
			count_lost(e->sandbox, PYSB_LOST_RINGBUF_FULL);
		goto done;
	}
	idx = __sync_fetch_and_add(&v->total, 1) + 1;
	now = e->ts_ns;
	if (!v->first_ns)
		v->first_ns = now;
	v->last_ns = now;
	last = v->last_emit_ns;
	if (last && now - last < PYSB_DEDUP_INTERVAL_NS)
		goto done; /* counted */
	if (__sync_val_compare_and_swap(&v->last_emit_ns, last, now) != last)
		goto done; /* another CPU sends this key's record */
	out->e.seq = idx;
	out->e.first_ns = v->first_ns ? v->first_ns : now;
	out->e.repeat = (__u32)(idx - v->emitted);
	if (bpf_ringbuf_output(rb, &out->e, size, 0)) {
		/* not lost: counted, told by the next record of the key or read by user
		 * space from the map */
		v->last_emit_ns = last;
	} else {
		v->emitted = idx;
		v->first_ns = 0;
	}
done:
	/* same CPU: a plain store after the copy is enough */
	*(volatile __u32 *)&b->busy = 0;
	return 0;
}
