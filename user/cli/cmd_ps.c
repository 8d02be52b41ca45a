// SPDX-License-Identifier: MIT
/* bpfbox ps and bpfbox stop: root reads the registry itself, other users ask the daemon. */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "daemon/client.h"
#include "exec_caller.h"
#include "sandbox/registry.h"
#include "sandbox/run_control.h"

struct ps_ctx {
	bool json;
	bool all_users;
	bool status; /* root's own ps --json: each running sandbox asked for its status */
	uid_t uid; /* without all_users: only this user's sandboxes */
	FILE *out;
	cJSON *arr;
	int count;
};

/*
 * A running sandbox's own answer (its policy's generation, digests and mode,
 * its refusals so far) merged into o; one that cannot be asked gets
 * "status_error" instead, and is listed all the same.
 */
static void add_status(cJSON *o, const char *id)
{
	struct run_control_request q = { .op = RUN_CONTROL_STATUS };
	struct errmsg em = { { 0 } };
	char *message = NULL;
	cJSON *st = NULL, *m;

	if (!run_control_call(id, &q, &message, &em) && message)
		st = cJSON_Parse(message);
	if (!cJSON_IsObject(st)) {
		cJSON_AddStringToObject(o, "status_error", em.text[0] ? em.text : "no status in the answer");
		goto out;
	}
	while (st->child) {
		m = cJSON_DetachItemViaPointer(st, st->child);
		cJSON_AddItemToObject(o, m->string, m);
	}
out:
	cJSON_Delete(st);
	free(message);
}

static int ps_entry(void *ctx, const struct registry_entry *e)
{
	struct ps_ctx *p = ctx;
	bool alive = registry_alive(e);
	char when[32];
	time_t t = (time_t)e->started;

	if (!p->all_users && e->uid != p->uid)
		return 0;
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	if (p->json) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "id", e->id);
		cJSON_AddNumberToObject(o, "supervisor_pid", e->supervisor);
		cJSON_AddNumberToObject(o, "pid", e->child);
		cJSON_AddStringToObject(o, "command", e->command);
		cJSON_AddStringToObject(o, "policy", e->policy);
		cJSON_AddStringToObject(o, "started", when);
		cJSON_AddStringToObject(o, "state", alive ? "running" : "orphaned");
		cJSON_AddNumberToObject(o, "uid", e->uid);
		if (p->status) {
			struct passwd pw, *found = NULL;
			char buf[1024];

			if (!getpwuid_r(e->uid, &pw, buf, sizeof(buf), &found) && found)
				cJSON_AddStringToObject(o, "user", found->pw_name);
			if (alive)
				add_status(o, e->id);
		}
		cJSON_AddItemToArray(p->arr, o);
	} else {
		if (!p->count)
			fprintf(p->out, "%-16s %-8s %-8s %-6s %-20s %-9s %-24s %s\n", "ID", "PID", "SUPERV", "UID",
				"STARTED", "STATE", "POLICY", "COMMAND");
		fprintf(p->out, "%-16s %-8d %-8d %-6u %-20s %-9s %-24s %s\n", e->id, e->child, e->supervisor,
			(unsigned)e->uid, when, alive ? "running" : "orphaned", e->policy, e->command);
	}
	p->count++;
	return 0;
}

static int ps_list(struct ps_ctx *ctx)
{
	struct ps_ctx p = *ctx;
	char *text;

	if (p.json)
		p.arr = cJSON_CreateArray();
	registry_each(ps_entry, &p);
	if (p.json) {
		text = cJSON_PrintUnformatted(p.arr);
		fprintf(p.out, "%s\n", text ? text : "[]");
		cJSON_free(text);
		cJSON_Delete(p.arr);
	}
	return 0;
}

int ps_render(FILE *out, bool json, bool all_users, uid_t uid)
{
	struct ps_ctx p = { .json = json, .all_users = all_users, .uid = uid, .out = out };

	return ps_list(&p);
}

/* A non-root ps, stop or update: one request, the daemon's answer printed. */
int daemon_ask(const struct wire_request *req)
{
	struct errmsg em = { { 0 } };
	struct wire_msg end;
	int sock = daemon_connect(&em), status;

	if (sock < 0) {
		fprintf(stderr, "bpfbox: %s\n", em.text);
		return BPFBOX_EXIT_SETUP;
	}
	if (daemon_request_send(sock, req, NULL, 0)) {
		fprintf(stderr, "bpfbox: sending the request to the daemon failed\n");
		close(sock);
		return BPFBOX_EXIT_SETUP;
	}
	if (daemon_answer_read(sock, stdout, &end, &em)) {
		if (em.text[0])
			fprintf(stderr, "bpfbox: %s\n", em.text);
		close(sock);
		return 1;
	}
	if (end.type == WIRE_MSG_ERROR)
		fprintf(stderr, "bpfbox: %s\n", end.message ? end.message : "refused");
	status = end.status;
	wire_msg_free(&end);
	close(sock);
	return status;
}

static int daemon_ask_ps(bool json)
{
	struct wire_request req = { .op = WIRE_OP_PS, .ps_json = json };

	return daemon_ask(&req);
}

static int daemon_ask_stop(const char *id)
{
	struct wire_request req = { .op = WIRE_OP_STOP };

	snprintf(req.sandbox_id, sizeof(req.sandbox_id), "%s", id);
	return daemon_ask(&req);
}

int cmd_ps(int argc, char **argv)
{
	bool json = argc > 1 && !strcmp(argv[1], "--json");

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: bpfbox ps [--json]\n  lists live sandboxes: root sees all, other users their own "
		       "(through the daemon)\n");
		return 0;
	}
	struct ps_ctx p = { .json = json, .all_users = true, .status = json, .out = stdout };

	if (geteuid() != 0)
		return daemon_ask_ps(json);
	return ps_list(&p);
}

int cmd_stop(int argc, char **argv)
{
	struct errmsg em = { { 0 } };

	if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc == 2 ? stdout : stderr,
			"usage: bpfbox stop ID\n  stops a sandbox (SIGTERM to its tree, SIGKILL after its grace); "
			"users stop their own, root any\n");
		return argc == 2 ? 0 : 2;
	}
	if (geteuid() != 0)
		return daemon_ask_stop(argv[1]);
	if (sandbox_stop_for(argv[1], true, 0, &em)) {
		fprintf(stderr, "bpfbox: stop: %s\n", em.text);
		return 1;
	}
	return 0;
}
