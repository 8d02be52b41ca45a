// SPDX-License-Identifier: MIT
/*
 * network.mitmProxy {socketPath, domains}, with srt's meaning: an allowed
 * name that domains matches is sent to the HTTP proxy listening on that
 * Unix socket (CONNECT for tunnels, absolute-form for plain HTTP) instead
 * of being dialled. bpfbox decides first: a denied name never reaches it.
 * Strict, as tlsTerminate is: a misspelt key would change where traffic goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "policy_json.h"

static const char MITM_PATH[] = "network.mitmProxy";

static const struct key_spec mitm_keys[] = {
	{ "socketPath", KEY_KNOWN, NULL },
	{ "domains", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};

void policy_mitm_free(struct policy_mitm *m)
{
	free(m->socket_path);
	free(m->domains);
	memset(m, 0, sizeof(*m));
}

static void parse_socket_path(struct pctx *c, const cJSON *mitm)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(mitm, "socketPath");
	char *path = jpath_key(c, MITM_PATH, "socketPath"), *abs = NULL;
	const char *s, *why;
	bool kept;
	int ret;

	if (!path)
		return;
	if (!v) {
		perr(c, path, "Required");
		goto out;
	}
	s = jelem_string(c, v, path, true);
	if (!s)
		goto out;
	/* Made absolute as other entries are (~, the launch directory); links kept. */
	ret = policy_path_normalise(s, c->p->cwd, c->p->home, false, &abs, &kept, &why);
	if (ret == -ENOMEM) {
		c->oom = true;
	} else if (ret) {
		perr(c, path, "\"%s\": %s", s, why);
	} else if (strlen(abs) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		perr(c, path, "\"%s\": longer than a Unix socket address holds (%zu bytes)", abs,
		     sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	} else {
		c->p->mitm.socket_path = abs;
		abs = NULL;
	}
out:
	free(abs);
	free(path);
}

static void parse_domains(struct pctx *c, const cJSON *mitm)
{
	struct policy_mitm *m = &c->p->mitm;
	const cJSON *arr = jget_array(c, mitm, "domains", MITM_PATH, true, "domain patterns");
	char *lp;
	size_t i = 0;

	if (!arr)
		return;
	lp = jpath_key(c, MITM_PATH, "domains");
	if (!lp)
		return;
	if (!arr->child)
		perr(c, lp, "at least one domain pattern is required (as in srt)");
	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char *path = jpath_index(c, lp, i);
		struct domain_pattern pat, *np;
		const char *s, *why;

		if (!path)
			break;
		s = jelem_string(c, it, path, true);
		if (s && domain_pattern_parse(s, false, &pat, &why)) {
			perr(c, path, "invalid domain pattern \"%s\": %s", s, why);
		} else if (s) {
			np = realloc(m->domains, (m->n_domains + 1) * sizeof(*np));
			if (pcheck(c, np)) {
				m->domains = np;
				np[m->n_domains++] = pat;
			}
		}
		free(path);
	}
	free(lp);
}

void policy_parse_mitm(struct pctx *c, const cJSON *net)
{
	const cJSON *mitm = cJSON_GetObjectItemCaseSensitive(net, "mitmProxy");

	if (!mitm)
		return;
	/* null or false asks for nothing, as tlsTerminate's. */
	if (cJSON_IsNull(mitm) || cJSON_IsFalse(mitm)) {
		pdebug(c, MITM_PATH, "accepted: mitmProxy is off");
		return;
	}
	if (!want_object(c, mitm, MITM_PATH))
		return;
	check_keys_ex(c, mitm, MITM_PATH, mitm_keys, "network.mitmProxy is strict: a misspelt "
		      "option would change where traffic goes");
	c->p->mitm.enabled = true;
	parse_socket_path(c, mitm);
	parse_domains(c, mitm);
}
