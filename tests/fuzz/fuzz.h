/* SPDX-License-Identifier: MIT */
/*
 * Shared by the libFuzzer targets: an invariant that does not hold is a
 * crash, so the fuzzer keeps the input that broke it.
 */
#ifndef BPFBOX_FUZZ_H
#define BPFBOX_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__,   \
				__LINE__, #cond);                                     \
			abort();                                                      \
		}                                                                     \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
