/* SPDX-License-Identifier: MIT */
/*
 * Learning (see learn.h and docs/policy.md, "Learning"). Generalisation and spelling
 * follow py-sandboxes (FORMAT-NOTES.md section 3): a file is replaced by its directory
 * (except in the directories of never_widened[]: the file itself), write wins over
 * read, a directory under an emitted one with enough access is dropped (the home
 * directory never covers), nothing under /proc/<pid>, known prefixes written as
 * variables, `~` or `.`.
 */
#include <netinet/in.h>

#include "learn_int.h"
#include "utf8.h"

/* ---------------- small helpers */

int push_str(char ***v, size_t *n, size_t *cap, const char *s)
{
	char *d;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return 0;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		char **nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return -1;
		*v = nv;
		*cap = c;
	}
	d = strdup(s);
	if (!d)
		return -1;
	(*v)[(*n)++] = d;
	return 0;
}

void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is `a` the path `b` or one of its ancestors? */
bool is_ancestor_or_same(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (!strcmp(a, "/"))
		return b[0] == '/';
	return !strncmp(a, b, n) && (b[n] == '\0' || b[n] == '/');
}

const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, n) && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

char *parent_of(const char *path)
{
	char *d = strdup(path), *slash;

	if (!d)
		return NULL;
	slash = strrchr(d, '/');
	if (slash == d)
		d[1] = '\0';
	else if (slash)
		*slash = '\0';
	return d;
}

void buf_put(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t c = (b->n + n + 1) * 2;
		char *ns = realloc(b->s, c);

		if (!ns) {
			b->oom = true;
			return;
		}
		b->s = ns;
		b->cap = c;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

void buf_puts_nl(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
	buf_put(b, "\n", 1);
}

/* ---------------- records -> needs */

const char *learn_path_key(const void *paths, size_t i)
{
	return ((const struct learn_path *)paths)[i].path;
}

/* One entry per path (a flood of distinct paths is looked up, not scanned): the accesses
 * add up, and a path seen as the parent of a created entry is a directory. */
static int add_path(struct learn_set *s, const char *path, uint32_t access, bool dir)
{
	size_t *slot;

	if (str_index_reserve(&s->path_index, s->n_paths, learn_path_key, s->paths))
		return -1;
	slot = str_index_slot(&s->path_index, path, learn_path_key, s->paths);
	if (*slot) {
		s->paths[*slot - 1].access |= access;
		s->paths[*slot - 1].dir |= dir;
		return 0;
	}
	if (s->n_paths == s->cap_paths) {
		size_t c = s->cap_paths ? s->cap_paths * 2 : 64;
		struct learn_path *v = realloc(s->paths, c * sizeof(*v));

		if (!v)
			return -1;
		s->paths = v;
		s->cap_paths = c;
	}
	s->paths[s->n_paths].path = strdup(path);
	if (!s->paths[s->n_paths].path)
		return -1;
	s->paths[s->n_paths].access = access;
	s->paths[s->n_paths].dir = dir;
	s->paths[s->n_paths].exact = 0;
	s->paths[s->n_paths].opened_rdwr = s->paths[s->n_paths].written = false;
	*slot = ++s->n_paths;
	return 0;
}

/* A path only a rule naming it grants (LEARN_EXACT_*), written commented out
 * (generate.c). A server outside the sandbox is reached only by a rule on its socket
 * itself (bpf/unix.bpf.c): a rule on its directory would grant the others there (tmux's,
 * ssh-agent's in /tmp), and such a server acts as the user, outside the sandbox. A block
 * device only by a rule on the device (bpf/file.bpf.c): it holds every file of its file
 * system. */
static int add_exact(struct learn_set *s, const char *path, uint32_t access, uint8_t exact)
{
	size_t *slot;

	if (add_path(s, path, access, false))
		return -1;
	slot = str_index_slot(&s->path_index, path, learn_path_key, s->paths);
	if (*slot)
		s->paths[*slot - 1].exact = exact;
	return 0;
}

static uint32_t access_bits(const json_t *a)
{
	uint32_t bits = 0;
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
	{
		const char *n = json_string_value(v);

		if (!n)
			continue;
		bits |= !strcmp(n, "read")    ? PYSB_ACC_READ
			: !strcmp(n, "write") ? PYSB_ACC_WRITE
			: !strcmp(n, "exec")  ? PYSB_ACC_EXEC
					      : 0;
	}
	return bits;
}

/* A port the program found in a *PORT* variable is written ${VAR} (the first by name). */
static const char *port_var(char *const *envp, unsigned port)
{
	const char *best = NULL;
	size_t best_len = 0;
	char want[16];

	if (!port)
		return NULL;
	snprintf(want, sizeof(want), "%u", port);
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		size_t n = eq ? (size_t)(eq - envp[i]) : 0;
		char name[128];

		if (!eq || n >= sizeof(name) || strcmp(eq + 1, want))
			continue;
		memcpy(name, envp[i], n);
		name[n] = '\0';
		if (!strstr(name, "PORT"))
			continue;
		if (!best || strcmp(name, best) < 0 || (n < best_len && !strncmp(name, best, n))) {
			best = envp[i];
			best_len = n;
		}
	}
	return best ? best : NULL;
}

static int add_net(struct learn_set *s, const json_t *rec, const char *op)
{
	const char *proto = json_string_value(json_object_get(rec, "protocol"));
	const char *addr = json_string_value(json_object_get(rec, "address"));
	json_int_t port = json_integer_value(json_object_get(rec, "port"));
	bool in = !strcmp(op, "bind") || !strcmp(op, "listen");
	const char *var;
	char line[256], ports[160];
	unsigned char bin[16];

	/* an address, nothing else: a record from a file a program wrote held "\n" and a rule */
	if (!addr || !proto ||
	    (inet_pton(AF_INET, addr, bin) != 1 && inet_pton(AF_INET6, addr, bin) != 1)) {
		s->unlearned++;
		return 0;
	}
	if (!strncmp(addr, "::ffff:", 7) && strchr(addr + 7, '.'))
		addr += 7; /* IPv4-mapped: judged by the IPv4 rules */
	/* OUT to the wildcard is judged as loopback (docs/network.md): a rule naming 0.0.0.0
	 * would never match (found by a user, asyncio's start_server(host=None)) */
	if (!in && !strcmp(addr, "0.0.0.0"))
		addr = "127.0.0.1";
	else if (!in && !strcmp(addr, "::"))
		addr = "::1";
	var = port_var(s->envp, (unsigned)port);
	if (var)
		snprintf(ports, sizeof(ports), "${%.*s}", (int)(strchr(var, '=') - var), var);
	else
		snprintf(ports, sizeof(ports), "%lld", (long long)port);
	snprintf(line, sizeof(line), "net=ALLOW|%s|%s|%s|%s", !strcmp(proto, "udp") ? "UDP" : "TCP",
		 addr, ports, in ? "IN" : "OUT");
	return push_str(&s->socket, &s->n_socket, &s->cap_socket, line);
}

/* socket(): what bpf.socket-family value allows the refused family. */
static int add_family(struct learn_set *s, const json_t *rec)
{
	const json_t *fam = json_object_get(rec, "family");
	const char *type = json_string_value(json_object_get(rec, "type"));
	json_int_t proto = json_integer_value(json_object_get(rec, "protocol"));
	const char *f = json_string_value(fam);
	char line[96];

	if (f && (!strcmp(f, "inet") || !strcmp(f, "inet6"))) {
		if (proto == 132)
			f = "sctp";
		else if (type && !strcmp(type, "raw"))
			f = "raw";
		else if (proto == 1 || proto == 58)
			f = "icmp";
	}
	if (f && (!*f || strspn(f, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(f))) {
		s->unlearned++; /* a family's name, nothing else (as a capability's, above) */
		return 0;
	}
	if (f)
		snprintf(line, sizeof(line), "bpf.socket-family=%s", f);
	else
		snprintf(line, sizeof(line), "bpf.socket-family=%lld",
			 (long long)json_integer_value(fam));
	return push_str(&s->socket, &s->n_socket, &s->cap_socket, line);
}

/* A net event: the net= rule or bpf.socket-family value that allows it. */
static int add_net_record(struct learn_set *s, const json_t *rec, const char *op)
{
	if (!strcmp(op, "socket"))
		return add_family(s, rec);
	if (!strcmp(op, "netlink-send"))
		return push_str(&s->socket, &s->n_socket, &s->cap_socket,
				"bpf.socket-family=netlink");
	if (!strcmp(op, "multicast")) /* the group is not known: the family's range */
		return push_str(&s->socket, &s->n_socket, &s->cap_socket,
				json_integer_value(json_object_get(rec, "level")) == IPPROTO_IPV6
					? "net=ALLOW|UDP|ff00::/8|*|IN"
					: "net=ALLOW|UDP|224.0.0.0/4|*|IN");
	return add_net(s, rec, op);
}

/* Is `path` what Python's bytecode cache writes: a directory __pycache__, or in one a
 * NAME.pyc or the NAME.pyc.ID it writes first and renames (importlib's _write_atomic)? */
static bool bytecode_cache(const char *path)
{
	const char *base = strrchr(path, '/'), *end;
	size_t n;

	if (!base)
		return false;
	base++;
	if (!strcmp(base, "__pycache__"))
		return true;
	n = strlen(base);
	if (!((n > 4 && !strcmp(base + n - 4, ".pyc")) || strstr(base, ".pyc.")))
		return false;
	end = base - 1; /* the parent's name ends here */
	return end - path >= 12 && !strncmp(end - 12, "/__pycache__", 12);
}

/* A write of Python's bytecode cache, counted and given no rule: one would make the
 * sources' directory writable (found by a user: `run --learn app.py` importing a module
 * beside it wrote expose-rw=.). */
static bool bytecode_cache_write(struct learn_set *s, const char *kind, uint32_t acc,
				 const char *path)
{
	if (strcmp(kind, "file") || !(acc & PYSB_ACC_WRITE) || !bytecode_cache(path))
		return false;
	if (!s->pycache++)
		snprintf(s->pycache_example, sizeof(s->pycache_example), "%s", path);
	return true;
}

/* A write of pytest's cache (.pytest_cache, made where pytest runs: the project), counted
 * and given no rule: like the bytecode cache's, one made the project writable (found by a
 * user, round 32: `run --learn python3 -m pytest` learned expose-rw=.). */
static bool pytest_cache_write(struct learn_set *s, const char *kind, uint32_t acc,
			       const char *path)
{
	const char *c = strstr(path, "/.pytest_cache");

	if (strcmp(kind, "file") || !(acc & PYSB_ACC_WRITE) || !c || (c[14] && c[14] != '/'))
		return false;
	if (!s->pytest_cache++)
		snprintf(s->pytest_cache_example, sizeof(s->pytest_cache_example), "%s", path);
	return true;
}

/* A control character, C1 ones too (U+0080 to U+009F: 8-bit CSI and OSC, which terminals
 * run), or a byte that is not UTF-8 (a raw 0x9b is CSI to an 8-bit terminal). The rule
 * would be printed for review on the user's terminal (found by an adversary, round 29: a
 * directory named with U+009B and "1A", "2K" erases the review's lines above it, an
 * expose-rw= among them). */
static bool has_control(const char *s)
{
	for (const char *end = s + strlen(s); *s;) {
		size_t n = utf8_printable(s, (size_t)(end - s));

		if (!n)
			return true;
		s += n;
	}
	return false;
}

/* A capability the policy does not grant (audit: the program kept its own). */
static int add_cap_record(struct learn_set *s, const json_t *rec)
{
	const char *cap = json_string_value(json_object_get(rec, "capability"));
	char line[96];

	/* A name as the kernel's ("CAP_", capitals, digits, '_'), nothing else: the record may
	 * come from a file a program wrote (`learn --from`), and a name with "\nexpose-rw=/etc"
	 * was written as two lines, the second one a rule no path learned could give (found
	 * by an adversary, round 29). */
	if (!cap || strncmp(cap, "CAP_", 4) || strlen(cap) > 32 || !cap[4] ||
	    strspn(cap + 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(cap + 4)) {
		s->unlearned++;
		return 0;
	}
	snprintf(line, sizeof(line), "bpf.capabilities=%s", cap);
	return push_str(&s->socket, &s->n_socket, &s->cap_socket, line);
}

/* How path (just added) was asked to be written: an open for reading and writing alone, or
 * something else (a lock for writing, a truncate, an open for writing alone). sqlite3
 * opens a database for reading and writing to read it (found by a user: learning made its
 * directory writable); learn_generate tells the two apart. */
static void mark_write(struct learn_set *s, const char *path, bool rdwr_open)
{
	size_t *slot = str_index_slot(&s->path_index, path, learn_path_key, s->paths);

	if (!*slot)
		return;
	if (rdwr_open)
		s->paths[*slot - 1].opened_rdwr = true;
	else
		s->paths[*slot - 1].written = true;
}

int learn_add_record(struct learn_set *s, const json_t *rec)
{
	const char *r = json_string_value(json_object_get(rec, "record"));
	const char *kind = json_string_value(json_object_get(rec, "kind"));
	const char *op = json_string_value(json_object_get(rec, "operation"));
	uint32_t acc = access_bits(json_object_get(rec, "access"));
	const char *reason;
	char *path;
	int ret = 0;
	json_int_t count = json_integer_value(json_object_get(rec, "count"));

	if (!r || strcmp(r, "event") || !kind || !op)
		return 0;
	s->records += count > 1 ? (size_t)count : 1; /* an aggregated record: count denials */
	if (!strcmp(kind, "net"))
		return add_net_record(s, rec, op);
	if (!strcmp(kind, "capability"))
		return add_cap_record(s, rec);
	if (!strcmp(kind, "unix") && json_is_true(json_object_get(rec, "abstract")))
		return push_str(&s->socket, &s->n_socket, &s->cap_socket,
				"bpf.unix-abstract=allow");
	path = json_object_get_bytes(rec, "path");
	reason = json_string_value(json_object_get(rec, "reason"));
	/* A name with a control character (a newline above all) has no policy line: written
	 * as it is, "z\nexpose-rw=/" would be two lines, the second one the program's. */
	if (!path || path[0] != '/' || json_is_true(json_object_get(rec, "path_truncated")) ||
	    !strcmp(kind, "self") || (reason && strstr(reason, "anonymous")) || has_control(path)) {
		s->unlearned++;
		free(path);
		return 0;
	}
	{
		const char *base = strrchr(path, '/');

		if (base && !strcmp(base, "/.env") && !s->dotenv++)
			snprintf(s->dotenv_example, sizeof(s->dotenv_example), "%s", path);
	}
	if (bytecode_cache_write(s, kind, acc, path) || pytest_cache_write(s, kind, acc, path)) {
		free(path);
		return 0;
	}
	if (!strcmp(kind, "exec")) {
		s->exec = true;
		ret = add_path(s, path, PYSB_ACC_RO, false);
	} else if (!strcmp(kind, "unix")) {
		/* a server outside: its socket itself; the sandbox's own: its directory */
		ret = json_is_true(json_object_get(rec, "peer_outside"))
			      ? add_exact(s, path, PYSB_ACC_RW, LEARN_EXACT_SOCKET)
			      : add_path(s, path, PYSB_ACC_RW, false);
	} else if (json_is_true(json_object_get(rec, "block_device"))) {
		/* the device itself, never /dev: a rule above it does not grant it */
		ret = add_exact(s, path, acc, LEARN_EXACT_BLOCK);
	} else if (json_is_true(json_object_get(rec, "char_device"))) {
		/* the device itself: a rule above /dev (the one that covers it) does not grant
		 * it, and a rule on its directory would grant that directory's other devices */
		ret = add_exact(s, path, acc & PYSB_ACC_WRITE ? PYSB_ACC_RW : PYSB_ACC_RO,
				LEARN_EXACT_DEVICE);
	} else if (op_on_parent(op_from_name(op))) {
		const char *h = env_get(s->envp, "HOME");
		char *dir = parent_of(path);

		if (!s->home_known && h && !realpath(h, s->home))
			snprintf(s->home, sizeof(s->home), "%s", h);
		s->home_known = true;
		/* in /etc, ~, ...: the entry itself, if it is still there (learn_generate) */
		if (dir && learn_never_widened(dir, s->home))
			ret = add_path(s, path, PYSB_ACC_RW, false);
		else
			ret = dir ? add_path(s, dir, PYSB_ACC_RW, true) : -1;
		free(dir);
	} else {
		ret = add_path(s, path, acc & PYSB_ACC_WRITE ? PYSB_ACC_RW : PYSB_ACC_RO, false);
		if (!ret && (acc & PYSB_ACC_WRITE))
			mark_write(s, path, !strcmp(op, "open") && (acc & PYSB_ACC_READ));
	}
	free(path);
	return ret;
}

void learn_set_free(struct learn_set *s)
{
	for (size_t i = 0; i < s->n_paths; i++)
		free(s->paths[i].path);
	free(s->paths);
	str_index_free(&s->path_index);
	free_strs(s->socket, s->n_socket);
	s->paths = NULL;
	s->socket = NULL;
	s->n_paths = s->n_socket = s->cap_paths = s->cap_socket = 0;
}
