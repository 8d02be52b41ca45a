// SPDX-License-Identifier: MIT
/*
 * libFuzzer entry for the parsers that read a sandbox's bytes on the
 * transparent path: DNS messages (and the resolver's cache, which keeps and
 * rewrites upstream answers) and TLS ClientHellos (make fuzz, make test).
 */
#include <stddef.h>
#include <stdint.h>

#include "dns/dns_cache.h"
#include "dns/dns_msg.h"
#include "proxy/proxy_tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dns_fuzz_one(data, size);
	dns_cache_fuzz_one(data, size);
	proxy_tls_fuzz_one(data, size);
	return 0;
}
