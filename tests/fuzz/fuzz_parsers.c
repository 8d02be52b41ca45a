// SPDX-License-Identifier: MIT
/*
 * libFuzzer entry for the parsers that read a sandbox's bytes on the
 * transparent path (not built by default):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude -Iuser \
 *     tests/fuzz/fuzz_parsers.c user/dns/dns_msg.c user/proxy/proxy_tls.c -o fuzz_parsers
 *   ./fuzz_parsers -max_len=20000
 */
#include <stddef.h>
#include <stdint.h>

#include "dns/dns_msg.h"
#include "proxy/proxy_tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dns_fuzz_one(data, size);
	proxy_tls_fuzz_one(data, size);
	return 0;
}
