// SPDX-License-Identifier: MIT
/*
 * timeit: runs a command N times and prints, one line per run, its wall time
 * in nanoseconds and its peak RSS in KiB. Timing inside one process avoids the
 * fork and exec of a shell around every sample, which under QEMU TCG costs as
 * much as the commands being compared.
 *
 * usage: timeit N COMMAND [ARGS...]
 * The command's stdout and stderr go to /dev/null; a run that does not exit 0
 * ends timeit with status 1, so a broken contender never yields a number.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n;

	if (argc < 3 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: timeit N COMMAND [ARGS...]\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		struct rusage ru;
		long long t0 = now_ns();
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			perror("timeit: fork");
			return 1;
		}
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0) {
				dup2(fd, 1);
				if (!getenv("TIMEIT_STDERR"))
					dup2(fd, 2);
			}
			execvp(argv[2], argv + 2);
			perror("timeit: exec");
			_exit(127);
		}
		if (wait4(pid, &status, 0, &ru) < 0) {
			perror("timeit: wait4");
			return 1;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "timeit: %s failed (status 0x%x)\n", argv[2], status);
			return 1;
		}
		printf("%lld %ld\n", now_ns() - t0, ru.ru_maxrss);
		fflush(stdout);
	}
	return 0;
}
