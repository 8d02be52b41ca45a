/* SPDX-License-Identifier: MIT */
/* The sandbox's own egress proxy, deciding with its policy and reporting to its log. */
#ifndef BPFBOX_SANDBOX_PROXY_H
#define BPFBOX_SANDBOX_PROXY_H

#include "lib/errmsg.h"
#include "log/log.h"
#include "policy/policy.h"
#include "proxy/addr_guard.h"
#include "proxy/proxy.h"

struct sandbox_proxy {
	struct proxy *proxy;
	struct addr_guard guard;
	const struct policy *policy;
	struct log *log;
	unsigned short port;
};

int sandbox_proxy_start(struct sandbox_proxy *sp, const struct policy *p, struct log *log, struct errmsg *em);
void sandbox_proxy_stop(struct sandbox_proxy *sp);

#endif
