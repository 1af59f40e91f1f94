/* SPDX-License-Identifier: MIT */
/*
 * The daemon's counters in the Prometheus text exposition format, served by
 * libmicrohttpd on the address the user chooses (--metrics ADDR:PORT).
 */
#include <dlfcn.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_metrics.h"
#include "events.h"
#include "log.h"
#include "version.h"

/*
 * libmicrohttpd is opened when --metrics asks for it, not linked: linked, it brings GnuTLS
 * and seven more libraries into the start of every `pysb-bpf run`.
 */
#define MHD_SONAME "libmicrohttpd.so.12"
static struct {
	__typeof__(&MHD_start_daemon) start_daemon;
	__typeof__(&MHD_stop_daemon) stop_daemon;
	__typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
	__typeof__(&MHD_add_response_header) add_response_header;
	__typeof__(&MHD_queue_response) queue_response;
	__typeof__(&MHD_destroy_response) destroy_response;
} mhd;

static int mhd_open(void)
{
	void *h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		pr_err("--metrics needs libmicrohttpd: %s; install it (apt-get install "
		       "libmicrohttpd12) or leave --metrics out",
		       dlerror());
		return -1;
	}
#define MHD_SYM(name)                                                  \
	if (!(*(void **)&mhd.name = dlsym(h, "MHD_" #name))) {         \
		pr_err("--metrics: %s has no MHD_" #name, MHD_SONAME); \
		return -1;                                             \
	}
	MHD_SYM(start_daemon)
	MHD_SYM(stop_daemon)
	MHD_SYM(create_response_from_buffer)
	MHD_SYM(add_response_header)
	MHD_SYM(queue_response)
	MHD_SYM(destroy_response)
#undef MHD_SYM
	return 0;
}

static const char *const kinds[METRICS_KINDS] = { "unknown", "file", "exec",	  "net",
						  "unix",    "self", "capability" };

void metrics_lock(struct daemon_metrics *m)
{
	pthread_mutex_lock(&m->mu);
}

void metrics_unlock(struct daemon_metrics *m)
{
	pthread_mutex_unlock(&m->mu);
}

void metrics_binding_added(struct daemon_metrics *m, struct binding_metrics *b, const char *name)
{
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->next = m->head;
	m->head = b;
}

void metrics_binding_removed(struct daemon_metrics *m, struct binding_metrics *b)
{
	for (struct binding_metrics **p = &m->head; *p; p = &(*p)->next)
		if (*p == b) {
			*p = b->next;
			return;
		}
}

void metrics_count_event(struct binding_metrics *b, int audit, unsigned kind, uint64_t n)
{
	b->events[audit ? 1 : 0][kind < METRICS_KINDS ? kind : 0] += n;
}

void metrics_count_lost(struct binding_metrics *b, int reason, uint64_t n)
{
	if (reason >= 0 && reason < PYSB_LOST_MAX)
		b->lost[reason] += n;
}

void metrics_count_reload(struct daemon_metrics *m, int ok)
{
	if (ok) {
		m->reloads_ok++;
		m->last_reload_ok = time(NULL);
	} else {
		m->reloads_failed++;
	}
	m->last_reload_failed = !ok;
}

void metrics_count_error(struct daemon_metrics *m, enum metrics_error why)
{
	m->errors[why]++;
}

/* A label value: backslash, double quote and newline escaped (the format's rule). */
static void label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* pysb_binding_confined: 1 when a binding's latest policy is on every cgroup it names
 * that exists; 0 when its file's latest version was rejected (the previous policy, if
 * any, stays in force), or a cgroup it names could not be confined. */
static void render_health(const struct daemon_metrics *m, FILE *f)
{
	fputs("# HELP pysb_binding_confined Whether the binding's latest policy is in force on "
	      "every cgroup it names (0: rejected, or a cgroup could not be confined).\n"
	      "# TYPE pysb_binding_confined gauge\n",
	      f);
	for (struct binding_metrics *b = m->head; b; b = b->next) {
		fputs("pysb_binding_confined{binding=\"", f);
		label(f, b->name);
		fprintf(f, "\"} %d\n", !b->stale && !b->failed);
	}
	for (size_t i = 0; i < m->n_rejected; i++) {
		bool known = false;

		for (struct binding_metrics *b = m->head; b && !known; b = b->next)
			known = !strcmp(b->name, m->rejected[i]);
		if (known)
			continue;
		fputs("pysb_binding_confined{binding=\"", f);
		label(f, m->rejected[i]);
		fputs("\"} 0\n", f);
	}
}

char *metrics_render(struct daemon_metrics *m)
{
	char *buf = NULL;
	size_t len = 0;
	size_t n_b = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fputs("# HELP pysb_events_total Denials (decision deny) and would-be denials (decision "
	      "audit) reported by the kernel.\n# TYPE pysb_events_total counter\n",
	      f);
	for (struct binding_metrics *b = m->head; b; b = b->next, n_b++)
		for (int a = 0; a < 2; a++)
			for (int k = 1; k < METRICS_KINDS; k++) {
				fputs("pysb_events_total{binding=\"", f);
				label(f, b->name);
				fprintf(f, "\",decision=\"%s\",kind=\"%s\"} %llu\n",
					a ? "audit" : "deny", kinds[k],
					(unsigned long long)b->events[a][k]);
			}
	fputs("# HELP pysb_events_lost_total Events the kernel could not deliver, by reason.\n"
	      "# TYPE pysb_events_lost_total counter\n",
	      f);
	for (struct binding_metrics *b = m->head; b; b = b->next)
		for (int r = 0; r < PYSB_LOST_MAX; r++) {
			fputs("pysb_events_lost_total{binding=\"", f);
			label(f, b->name);
			fprintf(f, "\",reason=\"%s\"} %llu\n", events_lost_name(r),
				(unsigned long long)b->lost[r]);
		}
	fputs("# HELP pysb_bound_cgroups Cgroups a binding confines now.\n"
	      "# TYPE pysb_bound_cgroups gauge\n",
	      f);
	for (struct binding_metrics *b = m->head; b; b = b->next) {
		fputs("pysb_bound_cgroups{binding=\"", f);
		label(f, b->name);
		fprintf(f, "\"} %zu\n", b->targets);
	}
	render_health(m, f);
	fprintf(f,
		"# HELP pysb_bindings Bindings in force.\n# TYPE pysb_bindings gauge\n"
		"pysb_bindings %zu\n"
		"# HELP pysb_reloads_total Reloads, by result (error: a binding was rejected and "
		"kept its previous policy).\n# TYPE pysb_reloads_total counter\n"
		"pysb_reloads_total{result=\"ok\"} %llu\npysb_reloads_total{result=\"error\"} %llu\n"
		"# HELP pysb_errors_total Cgroups that could not be confined (reason confine) "
		"or switched to a reloaded policy (reason switch).\n"
		"# TYPE pysb_errors_total counter\npysb_errors_total{reason=\"confine\"} %llu\n"
		"pysb_errors_total{reason=\"switch\"} %llu\n"
		"# HELP pysb_config_last_reload_successful Whether the last reload took every "
		"binding (0: one was rejected and keeps its previous policy).\n"
		"# TYPE pysb_config_last_reload_successful gauge\n"
		"pysb_config_last_reload_successful %d\n"
		"# HELP pysb_config_last_reload_success_timestamp_seconds When the configuration "
		"was last loaded whole (start, or a reload).\n"
		"# TYPE pysb_config_last_reload_success_timestamp_seconds gauge\n"
		"pysb_config_last_reload_success_timestamp_seconds %lld\n"
		"# HELP pysb_build_info The pysb-bpf release serving these metrics.\n"
		"# TYPE pysb_build_info gauge\npysb_build_info{version=\"%s\"} 1\n",
		n_b, (unsigned long long)m->reloads_ok, (unsigned long long)m->reloads_failed,
		(unsigned long long)m->errors[METRICS_ERR_CONFINE],
		(unsigned long long)m->errors[METRICS_ERR_SWITCH], !m->last_reload_failed,
		(long long)(m->last_reload_ok ? m->last_reload_ok : m->started), PYSB_VERSION);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *c, const char *url,
			     const char *method, const char *version, const char *upload,
			     size_t *upload_len, void **state)
{
	struct daemon_metrics *m = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *text;
	unsigned status = MHD_HTTP_OK;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)state;
	/* HEAD: the same answer, which libmicrohttpd sends without its body */
	if ((strcmp(method, "GET") && strcmp(method, "HEAD")) || strcmp(url, "/metrics")) {
		static char nf[] = "pysb-bpf serves GET and HEAD /metrics only\n";

		r = mhd.create_response_from_buffer(strlen(nf), nf, MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_NOT_FOUND;
	} else {
		metrics_lock(m);
		text = metrics_render(m);
		metrics_unlock(m);
		if (!text)
			return MHD_NO;
		r = mhd.create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
		mhd.add_response_header(r, "Content-Type", "text/plain; version=0.0.4");
	}
	if (!r)
		return MHD_NO;
	ret = mhd.queue_response(c, status, r);
	mhd.destroy_response(r);
	return ret;
}

int metrics_init(struct daemon_metrics *m, const char *addr)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	char host[256];
	const char *colon;
	int err;

	pthread_mutex_init(&m->mu, NULL);
	m->started = time(NULL);
	if (!addr)
		return 0;
	colon = strrchr(addr, ':');
	if (!colon || !colon[1] || (size_t)(colon - addr) >= sizeof(host)) {
		pr_err("--metrics %s: expected ADDR:PORT, e.g. 127.0.0.1:9464 or [::1]:9464", addr);
		return -1;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	err = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
	if (err) {
		pr_err("--metrics %s: %s", addr, gai_strerror(err));
		return -1;
	}
	if (mhd_open()) {
		freeaddrinfo(ai);
		return -1;
	}
	m->mhd = mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
					  (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				  0, NULL, NULL, serve, m, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				  MHD_OPTION_CONNECTION_LIMIT, 16u, MHD_OPTION_CONNECTION_TIMEOUT,
				  10u, MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!m->mhd) {
		pr_err("--metrics %s: cannot listen there (in use? not an address of this "
		       "machine?)",
		       addr);
		return -1;
	}
	return 0;
}

void metrics_stop(struct daemon_metrics *m)
{
	if (m->mhd)
		mhd.stop_daemon(m->mhd);
	m->mhd = NULL;
}
