/* SPDX-License-Identifier: MIT */
/*
 * Policy compiler: turns a parsed policy (plus the implicit paths a program needs to start)
 * into the exact entries of the BPF maps. Pure user-space work: `pysb-bpf check` runs it
 * without privileges.
 */
#ifndef PYSB_COMPILE_H
#define PYSB_COMPILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "policy.h"
#include "pysb_abi.h"

struct addrinfo;

struct compiled_file {
	char *path; /* canonical path the entry was made from */
	uint64_t ino;
	uint32_t dev;	 /* kernel dev_t: MAJOR << 20 | MINOR (what the inode carries) */
	uint32_t access; /* PYSB_ACC_* */
	uint64_t st_dev; /* as stat(2) reports it: with ino, unique among live files (overlayfs
			    gives non-directories per-layer devices for that), so entries
			    merge on it; the kernel side names the inode object itself */
	bool link;	 /* the entry is a symbolic link's own inode (not its target's) */
	bool implicit;
	const char *why;       /* implicit: the reason ("shared libraries", ...) */
	struct policy_src src; /* explicit: the policy line */
};

/* What the policy grants the mount point of a file system (for dentry-only hooks). */
struct compiled_mount {
	uint32_t dev;
	uint32_t access; /* the least over every mount of that file system */
};

/* ---- network (user/compile/compile_net.c, docs/network.md) ---- */

/* A net= line, or an implicit rule (DNS), as compiled; index + 1 is its number in events. */
struct compiled_net_rule {
	bool deny;
	bool implicit;
	bool host;	 /* NETWORK was a host name */
	bool dropped;	 /* ... that did not resolve (an ALLOW rule: dropped with a warning) */
	unsigned protos; /* POLICY_PROTO_* */
	unsigned dirs;	 /* POLICY_DIR_* */
	struct policy_port_range *ports;
	size_t n_ports;
	size_t n_addrs;	       /* prefixes it became */
	char *text;	       /* "DENY|tcp|10.0.0.0/8|443|OUT" */
	const char *why;       /* implicit: the reason */
	struct policy_src src; /* explicit: the policy line */
};

/* One entry of net4_rules / net6_rules. */
struct compiled_net_prefix {
	int af; /* AF_INET, AF_INET6 */
	unsigned plen;
	uint8_t addr[16]; /* network byte order, host bits clear; IPv4 in addr[0..3] */
	struct pysb_net_value value;
};

/* ---- end of network ---- */

/* A file hidden by an absolute ignore= pattern: a rule that grants nothing. */
struct compiled_hidden {
	char *path;
	uint64_t ino;
	uint32_t dev;
	struct policy_src src;
};

struct compiled {
	struct compiled_file *files;
	size_t n_files;
	struct pysb_ignore_set ignores; /* name patterns (user/compile/compile_ignore.c) */
	struct compiled_hidden *hidden;
	size_t n_hidden;
	struct compiled_mount *mounts;
	size_t n_mounts;
	bool exec_allowed;	    /* python-api grants process-exec */
	struct policy_src exec_src; /* the python-api line that decided, if any */
	bool audit_mode;	    /* bpf.mode=audit */
	uint32_t events_buffer;	    /* bpf.events-buffer, 0: the default */
	uint64_t caps;		    /* bpf.capabilities: bit N grants capability N */
	/* network (user/compile/compile_net.c) */
	struct compiled_net_rule *net_rules;
	size_t n_net_rules;
	struct compiled_net_prefix *net_prefixes;
	size_t n_net_prefixes;
	struct pysb_net_ports *net_ports; /* [0]: nothing allowed */
	size_t n_net_ports;
	struct pysb_net_cfg net_cfg;
};

struct compile_opts {
	const char *interpreter;  /* absolute path of the program executed first, or NULL */
	const char *script;	  /* the .py file run by it, or NULL */
	const char *script_named; /* the same as named, links kept (NULL: script) */
	/* the working directory a Python with no script lists as sys.path[0] (-c, -m, -):
	 * readable alone, as a script's directory is; or NULL */
	const char *path0_cwd;
	bool implicit; /* add the implicit paths, unless the policy says bpf.implicit=false */
	/* network: where the resolvers are (NULL: /etc/resolv.conf) and how host names are
	 * resolved (NULL: getaddrinfo); tests replace both. */
	const char *resolv_conf;
	int (*resolve)(const char *name, const struct addrinfo *hints, struct addrinfo **res);
	/* Where the errors and warnings go (user/lib/diag.h): check collects them there; NULL:
	 * printed on stderr as they come (run, the daemon). */
	struct diag_list *diag;
	/* a daemon's binding: the names on the way to `interpreter`, where the service may
	 * write, keep their names (each reload resolves it again; found by an adversary: a
	 * service re-pointed its venv's python at / and the next reload granted it) */
	bool keep_interpreter;
	/* the --events file pysb-bpf will write (NULL: none): where the program may write,
	 * read-only to it, its name and those on its way kept (it could forge records) */
	const char *events_file;
};

/* Where a policy line's message is about: its file, line and column. */
static inline struct diag_at src_at(const struct policy_src *s)
{
	return (struct diag_at){ s->file, s->line, s->col };
}

/* Returns 0, or -1 after reporting what failed (o->diag). */
int policy_compile(const struct policy *p, const struct compile_opts *o, struct compiled *out);
void compiled_free(struct compiled *c);

/*
 * The bpf.<key>= parameters, one row each (params.c): the default, what it does, how a
 * value is checked (NULL: where it is compiled), what a value does (for check).
 * `accumulates`: its lines add up, instead of the last one winning.
 */
struct bpf_param {
	const char *key, *def, *def_effect;
	bool accumulates;
	int (*check)(const struct policy_kv *kv, struct diag_list *d);
	/* The value into `out` (a bad one said with its file:line:col): 0 or -1. */
	int (*apply)(const struct policy_kv *kv, struct compiled *out, struct diag_list *d);
	const char *(*effect)(const struct policy_kv *kv, char *buf, size_t len);
	/* What check warns of a line: its i-th warning (from 0), NULL past the last. */
	const char *(*warning)(const struct policy_kv *kv, unsigned i, char *buf, size_t len);
};
extern const struct bpf_param BPF_PARAMS[];
extern const size_t N_BPF_PARAMS;
const struct bpf_param *bpf_param_find(const char *key);
/*
 * Are the policy's bpf.<key>= parameters ones pysb-bpf knows, with valid values? Returns 0,
 * or -1 after reporting each bad line with its file:line:col into d (NULL: stderr).
 * policy_compile() reads them the same way (compile_params).
 */
int policy_check_bpf_params(const struct policy *p, struct diag_list *d);
/*
 * The capabilities the policy's bpf.capabilities= lines grant, as a mask (bit N:
 * capability N). Lines add up. An empty value grants nothing; an empty or unknown item
 * is an error said as file:line:col. Returns 0, or -1 after reporting every error into d
 * (NULL: on stderr).
 */
int policy_capabilities(const struct policy *p, uint64_t *mask, struct diag_list *d);
/* policy_compile's reading of the bpf.* keys into out (audit_mode, events_buffer) and
 * *implicit (o->implicit and the policy's bpf.implicit). 0, or -1 after saying why. */
/* The PYSB_SB_* flags of a sandbox under `c` (audit: report, deny nothing); the daemon adds
 * PYSB_SB_DAEMON. */
uint32_t sandbox_flags(const struct compiled *c, bool audit);
int compile_params(const struct policy *p, const struct compile_opts *o, struct compiled *out,
		   bool *implicit);
/* A bpf.* boolean: true/false (any case), 1/0. Returns 1, 0, or -1 when neither. */
int policy_bpf_bool(const char *v);
/* "4M", "64MiB", "1G", "262144" in bytes (K, M, G: powers of 1024); 0 when malformed. */
uint64_t parse_size(const char *v);

/* May the program exec after its start? py-sandboxes' python-api resolution (by specificity,
 * DENY winning at equal specificity; policy_api.h); *src: the deciding line. */
bool policy_exec_allowed(const struct policy *p, struct policy_src *src);

/* net= rules and the bpf.socket-family / bpf.unix-abstract parameters (compile_net.c). */
int net_compile(const struct policy *p, const struct compile_opts *o, struct compiled *c);
/* The values of bpf.unix-abstract= (allow or deny: the last line wins) and of
 * bpf.socket-family= (families that add up) into cfg; 0, or -1 after saying why. */
int net_unix_abstract_value(const struct policy_kv *kv, struct pysb_net_cfg *cfg,
			    struct diag_list *d);
int net_families_value(const struct policy_kv *kv, struct pysb_net_cfg *cfg, struct diag_list *d);
void net_compiled_free(struct compiled *c);
/* May the program join multicast groups of family af (AF_INET, AF_INET6): does a net= rule
 * allow UDP IN (a port) on an address of 224.0.0.0/4 or ff00::/8, DENY rules weighed?
 * (PYSB_SB_MCAST4, PYSB_SB_MCAST6: the kernel side does not see the group.) */
bool net_multicast_allowed(const struct compiled *c, int af);
/* Is prefix e a host (/32, /128)? Does c have enough of them (PYSB_NET_HOSTS_MIN) to be
 * looked up in a hash before the trie (PYSB_SB_NET_HOSTS, bpf/net_verdict.bpf.h)? */
bool net_prefix_is_host(const struct compiled_net_prefix *e);
bool net_hosts_indexed(const struct compiled *c);
/* The rule a denial names (pysb_event.rule of a NET event), or NULL. */
const struct compiled_net_rule *net_rule_at(const struct compiled *c, uint32_t rule);
/* "netlink", "packet", ... for AF_ numbers; NULL when unknown. */
const char *net_family_name(unsigned family);

/* ignore= rules (user/compile/compile_ignore.c). */
int compile_ignores(const struct policy *p, struct compiled *out, struct diag_list *d);
void compiled_hidden_free(struct compiled *c);

/* stat(2) corrected to the (dev, ino) the kernel's inode carries (overlayfs). */
struct stat;
int stat_kernel(const char *path, struct stat *st, uint64_t *raw_dev);

/* stat(2), lstat(2), statfs(2)'s f_type, answered once per path between memo_begin and
 * memo_end (one policy_compile); straight calls outside (user/compile/stat_memo.c). */
void memo_begin(void);
void memo_end(void);
int memo_stat(const char *path, struct stat *st);
int memo_lstat(const char *path, struct stat *st);
int memo_statfs_type(const char *path, long *f_type);
/* realpath(3) into out (PATH_MAX), each directory's answer kept in a memo */
char *memo_realpath(const char *path, char *out);

/* Kernel dev_t of a user-space st_dev. */
uint32_t kernel_dev(uint64_t st_dev);

/* Implicit paths: the set a program needs to start, documented in docs/policy.md. */
struct implicit_path {
	char *path; /* existing, canonical */
	uint32_t access;
	const char *why;
};

/* `script`: the program's script, or NULL; `path0_cwd`: the working directory a Python
 * without one lists (compile_opts), or NULL. */
int implicit_paths(const char *interpreter, const char *script, const char *path0_cwd,
		   struct implicit_path **out, size_t *n);
/* Where implicit_paths() keeps what it computed for an interpreter, with an lstat(2) of
 * every path that went into it (checked again before use: a venv's re-pointed python, a
 * Python installed or removed, computes it again). NULL (the default): no cache. */
extern const char *implicit_cache_dir;
void implicit_paths_free(struct implicit_path *v, size_t n);
/* Nearest compiled rule covering canonical `path` (the longest prefix): its access, 0 if
 * none. explicit_only: the policy's own lines only. */
uint32_t compiled_access(const struct compiled *c, const char *path, bool explicit_only);
/* compiled_access(c, path, explicit_only) for many paths, while `c` gains no entry the
 * index would hold (explicit_only: implicit entries may come): the entries sorted by path,
 * once (user/compile/path_rules.c). path_rules_build: 0, or -1 out of memory. */
struct path_rules {
	const struct compiled *c;
	bool explicit_only;
	size_t *by_path; /* entry indices by (path, index); NULL: a small policy, scanned */
	size_t n;
};
int path_rules_build(struct path_rules *x, const struct compiled *c, bool explicit_only);
uint32_t path_rules_access(const struct path_rules *x, const char *path);
void path_rules_free(struct path_rules *x);

/* Do the rules of `compiled` (a struct compiled *) let the program write directory `dir`
 * as the kernel finds it: the nearest rule over its inode and its ancestors', by inode, so
 * that a bind mount of an rw tree counts (path prefixes miss it); unknown: yes. The shape
 * of struct path_writer's may_write. (compile_protect.c) */
bool compiled_lets_write(const char *dir, void *compiled);
/* What the user's tools run from a tree the program may write (.git, .py-sandboxes), in
 * an expose-rw= directory or right below it, not named by a rule itself: canonical paths
 * (compile_protect.c). 0, or -1 out of memory. */
struct tool_files {
	char **paths;
	size_t n;
};
int tool_files_find(const struct policy *p, struct tool_files *t);
void tool_files_free(struct tool_files *t);
/* The sockets bound now (the /proc/<pid>/net/unix of every network namespace; a bound name
 * gone: every socket file of its directory) where the program may write, no rule naming
 * them itself: kept by their names (compile_protect.c). 0, or -1 out of memory. */
int server_sockets_find(const struct policy *p, const struct compiled *out, struct tool_files *t);
/* Rules naming a unix socket: an error through a link in a directory the program may
 * write, a warning in such a directory (compile_protect.c). 0, or -1 (said in d). */
int socket_rules_check(const struct policy *p, const struct compiled *out, struct diag_list *d);

/* Does a rule on `path` (canonical; stat(2) `st`) grant the character devices below it,
 * PYSB_ACC_DEVICES: on /dev or below, or on a device node (compile_protect.c). */
struct stat;
bool compile_grants_devices(const char *path, const struct stat *st);
/* May the program write the directory `path` lies in (rename or replace its entry)? */
bool parent_writable(const struct compiled *out, const char *path);
/* May the script (canonical `script`, as named `named`) be granted READ as implicit?
 * (false said as a warning in d) */
bool script_grantable(const struct compiled *out, const char *named, const char *script,
		      struct diag_list *d);

/* The mounted file systems into c->mounts, with their access (compile_mounts.c). */
int compile_mounts(struct compiled *c, struct diag_list *d);
/* Is `interp` a Python (its name, or its target's, starts with "python")? */
bool interpreter_is_python(const char *interp);
/* The pythons a --copies venv's pyvenv.cfg names (`home`), as links: into out, their
 * number (implicit.c). */
size_t venv_home_pythons(const char *interp, char (*out)[PATH_MAX], size_t max);

#endif /* PYSB_COMPILE_H */
