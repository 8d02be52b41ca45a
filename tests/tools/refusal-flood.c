// SPDX-License-Identifier: MIT
/*
 * refusal-flood DIR N: tries to create DIR/f0 .. DIR/f<N-1>, each a distinct
 * name, so the kernel's rate limit cannot fold them (distinct objects).
 * Prints how many creations were refused with EPERM; exits 0 when all were.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n, refused = 0;
	char path[4096];

	if (argc != 3) {
		fprintf(stderr, "usage: refusal-flood DIR N\n");
		return 2;
	}
	n = strtol(argv[2], NULL, 10);
	for (long i = 0; i < n; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/f%ld", argv[1], i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd >= 0)
			close(fd);
		else if (errno == EPERM)
			refused++;
	}
	printf("refused %ld of %ld\n", refused, n);
	return refused == n ? 0 : 1;
}
