// SPDX-License-Identifier: MIT
/* The OpenSSL table of openssl_lazy.h, filled by dlopen(3) on first use. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define OPENSSL_LAZY_TABLE_ONLY
#include "openssl_lazy.h"

/* The soname bpfbox was built against: OpenSSL keeps its ABI within a major version. */
#define LIBSSL_SONAME "libssl.so." OPENSSL_MSTR(OPENSSL_VERSION_MAJOR)

static struct openssl_lazy table;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct errmsg load_error;
static int load_err;

static void load(void)
{
	/* libssl's handle finds libcrypto's functions too: dlsym searches its dependencies. */
	void *ssl = dlopen(LIBSSL_SONAME, RTLD_NOW | RTLD_LOCAL);
	const char *missing = NULL;

	if (!ssl) {
		load_err = errmsg_set(&load_error, -ENOENT,
				      "loading OpenSSL for TLS termination or masked credentials: %s "
				      "(install Debian's libssl3)", dlerror());
		return;
	}
#define OPENSSL_LAZY_FILL(f) \
	if (!missing && !(table.f = (__typeof__(table.f))dlsym(ssl, #f))) \
		missing = #f;
	OPENSSL_LAZY_FUNCS(OPENSSL_LAZY_FILL)
#undef OPENSSL_LAZY_FILL
	if (missing) {
		/* The library stays loaded: a handle closed would leave nothing to clean. */
		load_err = errmsg_set(&load_error, -ENOSYS, "%s lacks %s, which bpfbox was built to use",
				      LIBSSL_SONAME, missing);
	}
}

int openssl_lazy_load(struct errmsg *em)
{
	pthread_once(&once, load);
	if (load_err && em)
		*em = load_error;
	return load_err;
}

const struct openssl_lazy *openssl_lazy(void)
{
	if (openssl_lazy_load(NULL)) {
		/* Setup checks the load first: reaching here means a path that did not. */
		fprintf(stderr, "bpfbox: %s\n", load_error.text);
		abort();
	}
	return &table;
}
