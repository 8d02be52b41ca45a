// SPDX-License-Identifier: MIT
/*
 * The administrator's policy versions. Everything here runs as root on
 * root's directories, but every file is still made with O_EXCL|O_NOFOLLOW
 * and read with O_NOFOLLOW from a directory descriptor, so a link placed in
 * the history (by a mistake or an attacker who got there) is refused, not
 * followed. The directory is locked (flock) while a command uses it: two
 * applies at once cannot take the same number.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "policy.h"
#include "policy_store.h"

static int mkdir_one(const char *path, mode_t mode)
{
	return mkdir(path, mode) && errno != EEXIST ? -errno : 0;
}

int policy_store_open(const char *dir, bool create)
{
	char *parent, *slash;
	struct stat st;
	int fd, ret;

	if (!create)
		goto open_dir;
	parent = strdup(dir);
	if (!parent)
		return -ENOMEM;
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		ret = mkdir_one(parent, 0755);
		if (ret) {
			free(parent);
			return ret;
		}
	}
	free(parent);
	ret = mkdir_one(dir, 0700);
	if (ret)
		return ret;
open_dir:
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	if (flock(fd, LOCK_EX)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/* "000042.json" -> 42; 0 for any other name. */
static unsigned version_of(const char *name)
{
	unsigned n = 0;

	for (int i = 0; i < 6; i++) {
		if (!isdigit((unsigned char)name[i]))
			return 0;
		n = n * 10 + (unsigned)(name[i] - '0');
	}
	return strcmp(name + 6, ".json") ? 0 : n;
}

static int read_at(int dirfd, const char *name, char **text, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), ret;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	ret = policy_read_fd(fd, text, len);
	close(fd);
	return ret;
}

static void copy_str(char *dst, size_t size, const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	snprintf(dst, size, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static long long get_ll(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) ? (long long)v->valuedouble : -1;
}

/* Version n's metadata; a missing or broken one leaves only number and sha256 (of the bytes). */
static int read_meta(int dirfd, unsigned n, struct policy_version *v)
{
	char name[32], *text = NULL;
	size_t len;
	cJSON *m;
	int ret;

	memset(v, 0, sizeof(*v));
	v->number = n;
	v->uid = v->login_uid = -1;
	ret = policy_store_read(dirfd, n, &text, &len);
	if (ret)
		return ret;
	policy_sha256_hex(text, len, v->sha256);
	free(text);
	snprintf(name, sizeof(name), "%06u.meta.json", n);
	if (read_at(dirfd, name, &text, &len))
		return 0;
	m = cJSON_ParseWithLength(text, len);
	free(text);
	copy_str(v->applied_at, sizeof(v->applied_at), m, "applied_at");
	copy_str(v->login_name, sizeof(v->login_name), m, "login_name");
	copy_str(v->source, sizeof(v->source), m, "source");
	copy_str(v->message, sizeof(v->message), m, "message");
	v->uid = get_ll(m, "uid");
	v->login_uid = get_ll(m, "login_uid");
	cJSON_Delete(m);
	return 0;
}

static int by_number(const void *a, const void *b)
{
	unsigned x = ((const struct policy_version *)a)->number;
	unsigned y = ((const struct policy_version *)b)->number;

	return x < y ? -1 : x > y;
}

int policy_store_list(int dirfd, struct policy_version **out, size_t *n)
{
	int fd = dup(dirfd), ret = 0;
	struct policy_version *v = NULL, *grown;
	struct dirent *de;
	size_t count = 0;
	DIR *d;

	*out = NULL;
	*n = 0;
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		unsigned num = version_of(de->d_name);

		if (!num)
			continue;
		grown = realloc(v, (count + 1) * sizeof(*v));
		if (!grown) {
			ret = -ENOMEM;
			break;
		}
		v = grown;
		if (!read_meta(dirfd, num, &v[count]))
			count++;
	}
	closedir(d);
	if (ret) {
		free(v);
		return ret;
	}
	if (count > 1)
		qsort(v, count, sizeof(*v), by_number);
	*out = v;
	*n = count;
	return 0;
}

int policy_store_read(int dirfd, unsigned number, char **text, size_t *len)
{
	char name[32];

	if (!number || number > 999999)
		return -ENOENT;
	snprintf(name, sizeof(name), "%06u.json", number);
	return read_at(dirfd, name, text, len);
}

/*
 * A new file name in dirfd with data, synced; never over an existing name or
 * through a link. Its group is gid unless that is (gid_t)-1.
 */
static int write_new(int dirfd, const char *name, const void *data, size_t len, mode_t mode, gid_t gid)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	const char *p = data;
	int ret = 0;

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ret = w < 0 ? -errno : -EIO;
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	if (!ret && gid != (gid_t)-1 && fchown(fd, (uid_t)-1, gid))
		ret = -errno;
	if (!ret && fchmod(fd, mode))
		ret = -errno;
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (ret)
		unlinkat(dirfd, name, 0);
	return ret;
}

cJSON *policy_version_json(const struct policy_version *m)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "version", m->number);
	cJSON_AddStringToObject(o, "sha256", m->sha256);
	cJSON_AddStringToObject(o, "applied_at", m->applied_at);
	cJSON_AddNumberToObject(o, "uid", (double)m->uid);
	cJSON_AddNumberToObject(o, "login_uid", (double)m->login_uid);
	cJSON_AddStringToObject(o, "login_name", m->login_name);
	cJSON_AddStringToObject(o, "source", m->source);
	cJSON_AddStringToObject(o, "message", m->message);
	return o;
}

static char *meta_json(const struct policy_version *m)
{
	cJSON *o = policy_version_json(m);
	char *text = o ? cJSON_Print(o) : NULL;

	cJSON_Delete(o);
	return text;
}

int policy_store_add(int dirfd, const char *text, size_t len, struct policy_version *meta)
{
	struct policy_version *v;
	char name[32], *m;
	size_t n;
	int ret = policy_store_list(dirfd, &v, &n);

	if (ret)
		return ret;
	meta->number = n ? v[n - 1].number + 1 : 1;
	if (meta->number > 999999) {
		free(v);
		return -EOVERFLOW;
	}
	policy_sha256_hex(text, len, meta->sha256);
	m = meta_json(meta);
	snprintf(name, sizeof(name), "%06u.json", meta->number);
	ret = m ? write_new(dirfd, name, text, len, 0600, (gid_t)-1) : -ENOMEM;
	if (!ret) {
		snprintf(name, sizeof(name), "%06u.meta.json", meta->number);
		ret = write_new(dirfd, name, m, strlen(m), 0600, (gid_t)-1);
		if (ret) {
			snprintf(name, sizeof(name), "%06u.json", meta->number);
			unlinkat(dirfd, name, 0);
		}
	}
	/* The oldest beyond the bound (the new one counts). */
	for (size_t i = 0; !ret && n + 1 > POLICY_HISTORY_KEEP && i < n + 1 - POLICY_HISTORY_KEEP; i++) {
		snprintf(name, sizeof(name), "%06u.meta.json", v[i].number);
		unlinkat(dirfd, name, 0);
		snprintf(name, sizeof(name), "%06u.json", v[i].number);
		unlinkat(dirfd, name, 0);
	}
	if (!ret && fsync(dirfd))
		ret = -errno;
	free(m);
	free(v);
	return ret;
}

int policy_store_replace(const char *target, const char *text, size_t len)
{
	const char *slash = strrchr(target, '/'), *base;
	mode_t mode = 0644;
	gid_t gid = (gid_t)-1;
	char *dir, tmp[64];
	struct stat st;
	int dirfd, ret;

	if (!slash || !slash[1])
		return -EINVAL;
	base = slash + 1;
	dir = strndup(target, slash == target ? 1 : (size_t)(slash - target));
	if (!dir)
		return -ENOMEM;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (dirfd < 0)
		return -errno;
	/*
	 * The file in force keeps its group and its read permissions (an
	 * administrator's 0640 or 0600 hides a parent proxy's password), never
	 * more than 0644; a link in its place gives those of the file it names
	 * (the link itself is replaced, never followed); a new file gets 0644.
	 */
	if (!fstatat(dirfd, base, &st, 0) && S_ISREG(st.st_mode)) {
		mode = st.st_mode & 0644;
		gid = st.st_gid;
	}
	snprintf(tmp, sizeof(tmp), ".bpfbox-policy.%d.tmp", (int)getpid());
	unlinkat(dirfd, tmp, 0);	/* one left by a killed apply of this pid */
	ret = write_new(dirfd, tmp, text, len, mode, gid);
	if (!ret && renameat(dirfd, tmp, dirfd, base))
		ret = -errno;
	if (ret)
		unlinkat(dirfd, tmp, 0);
	else if (fsync(dirfd))
		ret = -errno;
	close(dirfd);
	return ret;
}

void policy_store_who(struct policy_version *meta)
{
	char buf[32] = "";
	struct passwd *pw;
	struct tm tm;
	time_t now = time(NULL);
	int fd = open("/proc/self/loginuid", O_RDONLY | O_CLOEXEC);
	ssize_t r = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	unsigned long long lu;

	if (fd >= 0)
		close(fd);
	meta->uid = getuid();
	meta->login_uid = -1;
	meta->login_name[0] = '\0';
	if (r > 0 && sscanf(buf, "%llu", &lu) == 1 && lu != 4294967295ULL) {
		meta->login_uid = (long long)lu;
		pw = getpwuid((uid_t)lu);
		if (pw)
			snprintf(meta->login_name, sizeof(meta->login_name), "%s", pw->pw_name);
	}
	gmtime_r(&now, &tm);
	strftime(meta->applied_at, sizeof(meta->applied_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
}
