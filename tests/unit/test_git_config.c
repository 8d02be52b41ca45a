// SPDX-License-Identifier: MIT
/*
 * git's config format (git/git_config.c): each syntax feature, errors with
 * the line git names, every executing key and its near misses, the
 * canonical form read back; and, where git is installed, the same inputs
 * read by git itself (git config --list --null), entry by entry.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "git/git_config.h"

struct exp {
	const char *section, *sub, *key, *value;
	int line;
};

#define BARE NULL /* a value-less key */

/* text, escaped for a message, in buf. */
static const char *shown(const char *text, size_t len, char *buf, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 5 < size; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\n')
			o += (size_t)snprintf(buf + o, size - o, "\\n");
		else if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
		else if (strchr("\"\\", c))
			o += (size_t)snprintf(buf + o, size - o, "\\%c", c);
		else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return buf;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool entry_eq(const struct git_config_entry *a, const struct git_config_entry *b)
{
	return str_eq(a->section, b->section) && str_eq(a->subsection, b->subsection) &&
	       str_eq(a->key, b->key) && str_eq(a->value, b->value);
}

static void check_parse(const char *text, size_t len, const struct exp *x, size_t n)
{
	struct git_config c;
	char buf[1024];
	int line = -1, err = git_config_parse(text, len, &c, &line);

	if (err)
		fail_msg("\"%s\": error %d at line %d", shown(text, len, buf, sizeof(buf)), err, line);
	assert_int_equal(line, 0);
	if (c.n != n)
		fail_msg("\"%s\": %zu entries, want %zu", shown(text, len, buf, sizeof(buf)), c.n, n);
	for (size_t i = 0; i < n; i++) {
		const struct git_config_entry *e = &c.entries[i];

		if (!str_eq(e->section, x[i].section) || !str_eq(e->subsection, x[i].sub) ||
		    !str_eq(e->key, x[i].key) || !str_eq(e->value, x[i].value) || e->line != x[i].line)
			fail_msg("\"%s\" entry %zu: [%s|%s|%s|%s] line %d", shown(text, len, buf, sizeof(buf)), i,
				 e->section, e->subsection ? e->subsection : "(null)", e->key,
				 e->value ? e->value : "(null)", e->line);
	}
	git_config_free(&c);
}

#define PARSE(text, ...)                                                                         \
	do {                                                                                     \
		const struct exp x_[] = { __VA_ARGS__ };                                         \
		check_parse(text, sizeof(text) - 1, x_, sizeof(x_) / sizeof(x_[0]));             \
	} while (0)
#define PARSE_EMPTY(text) check_parse(text, sizeof(text) - 1, NULL, 0)

static void check_error(const char *text, size_t len, int want, int want_line)
{
	struct git_config c = { (void *)1, 99 };
	char buf[1024];
	int line = -1, err = git_config_parse(text, len, &c, &line);

	if (err != want || line != want_line)
		fail_msg("\"%s\": error %d line %d, want %d line %d", shown(text, len, buf, sizeof(buf)), err,
			 line, want, want_line);
	assert_null(c.entries);
	assert_int_equal(c.n, 0);
}

#define BAD(text, line) check_error(text, sizeof(text) - 1, -EINVAL, line)

static void test_sections_and_keys(void **state)
{
	PARSE("[core]\n\tbare = false\n\teditor = vim\n", { "core", NULL, "bare", "false", 2 },
	      { "core", NULL, "editor", "vim", 3 });
	PARSE("[CoRe]\n\tEdItOr = Vim\n", { "core", NULL, "editor", "Vim", 2 });
	PARSE("[remote \"Origin\"]\n\turl = x\n", { "remote", "Origin", "url", "x", 2 });
	PARSE("[a-1 \"sub\"]k-2=v", { "a-1", "sub", "k-2", "v", 1 });
	/* Only \" and \\ are documented; git takes any other escaped character as itself. */
	PARSE("[a \"q\\\"b\\\\c\"]\nk=1\n", { "a", "q\"b\\c", "k", "1", 2 });
	PARSE("[a \"\\x\\y\\t\"]k=1", { "a", "xyt", "k", "1", 1 });
	PARSE("[a \"x y;#=[]\t.\"]k=1", { "a", "x y;#=[]\t.", "k", "1", 1 });
	PARSE("[a \t \"b\"]k=1", { "a", "b", "k", "1", 1 });
	PARSE("[a\r\"b\"]k=1", { "a", "b", "k", "1", 1 });
	PARSE("[a \"\xc3\xa9\"]k=1", { "a", "\xc3\xa9", "k", "1", 1 });
	/* The deprecated [section.subsection] is lower-cased whole, as git does. */
	PARSE("[Remote.Origin]\nurl=x\n", { "remote", "origin", "url", "x", 2 });
	PARSE("[a.b.C]k=1", { "a", "b.c", "k", "1", 1 });
	PARSE("[a.B \"C\"]k=1", { "a", "b.C", "k", "1", 1 });
	PARSE("[a \"\"]k=1", { "a", "", "k", "1", 1 });
	PARSE("[a.]k=1", { "a", "", "k", "1", 1 });
	PARSE("[ \"s\"]k=1", { "", "s", "k", "1", 1 });
	PARSE("[.]k=1", { "", "", "k", "1", 1 });
	PARSE("[..x]k=1", { "", ".x", "k", "1", 1 });
	/* A key on the header's line, or several headers on one line. */
	PARSE("[core] editor = vim\n", { "core", NULL, "editor", "vim", 1 });
	PARSE("[a][b]k", { "b", NULL, "k", BARE, 1 });
	PARSE("[a] # c\n k", { "a", NULL, "k", BARE, 2 });
	PARSE("[a]k=1[b]j=2", { "a", NULL, "k", "1[b]j=2", 1 });
	/* Keys before any header: git lists them by their bare name. */
	PARSE("k = v\n[a]j=1", { "", NULL, "k", "v", 1 }, { "a", NULL, "j", "1", 2 });
	PARSE("[a]K9-x\t=\tv", { "a", NULL, "k9-x", "v", 1 });
	PARSE("[a]\n\tk\n[a]\n\tk\n", { "a", NULL, "k", BARE, 2 }, { "a", NULL, "k", BARE, 4 });
	PARSE_EMPTY("");
	PARSE_EMPTY("\n\n  \t\r\n");
	PARSE_EMPTY("[a]\n[b \"c\"]\n");
}

static void test_values(void **state)
{
	PARSE("[core]\n\tbare\n", { "core", NULL, "bare", BARE, 2 });
	PARSE("[core]\n\tbare   \t\n", { "core", NULL, "bare", BARE, 2 });
	PARSE("[a]k =\n", { "a", NULL, "k", "", 1 });
	PARSE("[a]k = \"\"\n", { "a", NULL, "k", "", 1 });
	PARSE("[a]k = ;c\n", { "a", NULL, "k", "", 1 });
	/* Comments end a value outside quotes. */
	PARSE("# c\n; c\n[a] ; c\nk = v # c\nj = v;c\n", { "a", NULL, "k", "v", 4 }, { "a", NULL, "j", "v", 5 });
	PARSE("[a]k = \"v # not; \" # c", { "a", NULL, "k", "v # not; ", 1 });
	PARSE("[a]k = x\"#\"y", { "a", NULL, "k", "x#y", 1 });
	/* Whitespace: trimmed at both ends outside quotes, kept inside (verbatim, as git 2.45 on). */
	PARSE("[a]k =   a  b\t c   \n", { "a", NULL, "k", "a  b\t c", 1 });
	PARSE("[a]k = \"  a \" \n", { "a", NULL, "k", "  a ", 1 });
	PARSE("[a]k = x \"\" \n", { "a", NULL, "k", "x ", 1 });
	PARSE("[a]k = \"\" x\n", { "a", NULL, "k", "x", 1 });
	PARSE("[a]k = \" \"x\" \"\n", { "a", NULL, "k", " x ", 1 });
	PARSE("[a]k = a\"b\"c \"d\"\n", { "a", NULL, "k", "abc d", 1 });
	PARSE("[a]k = \"a\tb\"\n", { "a", NULL, "k", "a\tb", 1 });
	/* Escapes, inside quotes or not. */
	PARSE("[a]k = a\\tb\\nc\\bd\\\\e\\\"f\n", { "a", NULL, "k", "a\tb\nc\bd\\e\"f", 1 });
	PARSE("[a]k = \"\\t\\n\\\\\\\"\"\n", { "a", NULL, "k", "\t\n\\\"", 1 });
	/* Backslash-newline continues the value, its next line's whitespace kept. */
	PARSE("[a]\nk = 1\\\n  2\nj = 3\n", { "a", NULL, "k", "1  2", 2 }, { "a", NULL, "j", "3", 4 });
	PARSE("[a]k = \"a\\\nb\"", { "a", NULL, "k", "ab", 1 });
	PARSE("[a]k = a \\\n", { "a", NULL, "k", "a ", 1 });
	PARSE("[a]k = a\\\n# not a comment\n", { "a", NULL, "k", "a", 1 });
	PARSE("[a]k=x\\", { "a", NULL, "k", "x", 1 });
	PARSE("[a]k = a # c \\\nj", { "a", NULL, "k", "a", 1 }, { "a", NULL, "j", BARE, 2 });
	/* Bytes git does not interpret. */
	PARSE("[a]k = \x01\x7f\xff\xc3\xa9[]=\n", { "a", NULL, "k", "\x01\x7f\xff\xc3\xa9[]=", 1 });
	PARSE("[a]k = =x=\n", { "a", NULL, "k", "=x=", 1 });
}

static void test_bom_crlf(void **state)
{
	PARSE("\xef\xbb\xbf[a]k=1", { "a", NULL, "k", "1", 1 });
	PARSE("\xef\xbb\xbf\n[a]k=1", { "a", NULL, "k", "1", 2 });
	PARSE_EMPTY("\xef\xbb\xbf");
	PARSE("[a]\r\nk = v\r\nj\r\n", { "a", NULL, "k", "v", 2 }, { "a", NULL, "j", BARE, 3 });
	PARSE("[a]\r\nk = a\\\r\nb\r\nj=1", { "a", NULL, "k", "ab", 2 }, { "a", NULL, "j", "1", 4 });
	/* A lone CR is a character: whitespace to git, kept inside a value. */
	PARSE("[a]k = x\ry\n", { "a", NULL, "k", "x\ry", 1 });
	PARSE("[a]k = x\r\r\n", { "a", NULL, "k", "x", 1 });
	PARSE("[a]k=1\r", { "a", NULL, "k", "1", 1 });
	PARSE("\r[a]\r\rk=\"\r\"", { "a", NULL, "k", "\r", 1 });
}

static void test_errors(void **state)
{
	BAD("[a", 2);
	BAD("[a\n]", 1);
	BAD("[a \"b\"\n", 2);
	BAD("[a \"b\" ]", 1);
	BAD("[a \"b\n\"]", 1);
	BAD("[a \"b\\\n\"]", 1);
	BAD("[a \"b", 1);
	BAD("[]", 1);
	BAD("[a b]", 1);
	BAD("[a_b]", 1);
	BAD("[a\"b\"]", 1);
	BAD("[a.b c]", 1);
	BAD("[a]]", 1);
	BAD("[a]\n1k=2", 2);
	BAD("[a]\nk_x=1", 2);
	BAD("[a]\nk # c", 2);
	BAD("[a]\nk ; c", 2);
	BAD("[a]\nk : v", 2);
	BAD("[a]\n=1", 2);
	BAD("[a]\n-k=1", 2);
	BAD("[a]\nk\r=1", 2);
	BAD("[a]\nk.x=1", 2);
	BAD("[a]\n\n\nk = \"open\n", 4);
	BAD("[a]\nk = \"open\\\nstill\n", 3);
	BAD("[a]\nk = \"open", 2);
	BAD("[a]\nk = \\q", 2);
	BAD("[a]\nk = \\ x", 2);
	BAD("[a]\nk = \\\rx", 2);
	BAD("[a]\nk = \"\\a\"", 2);
	BAD("[a]\nk = 1\\\n\\z", 3);
	BAD("\xef\xbb[a]k=1", 1);
	BAD("\xef", 2);
	BAD("[a]k=1\n\xef\xbb\xbf", 2);
	BAD("\xbb\xbf[a]", 1);
	BAD("[a]\n\xc3\xa9=1", 2);
	/* git would read a NUL as a character; refused, with its line. */
	check_error("[a]\nk=v\0\n", 9, -EINVAL, 2);
	check_error("\0", 1, -EINVAL, 1);
	check_error("[a]\r\n\r\n#\0", 9, -EINVAL, 3);
}

static void test_limits(void **state)
{
	size_t header = 500000, n = GIT_CONFIG_MAX_ENTRIES;
	struct git_config c;
	char *buf = malloc(GIT_CONFIG_MAX_BYTES + 1), *out = NULL;
	size_t len, out_len;
	int line;

	assert_non_null(buf);
	assert_int_equal(git_config_parse(NULL, 0, &c, NULL), 0);
	assert_int_equal(c.n, 0);
	git_config_free(&c);
	assert_int_equal(git_config_parse("[", 1, &c, NULL), -EINVAL);
	memset(buf, '#', GIT_CONFIG_MAX_BYTES + 1);
	assert_int_equal(git_config_parse(buf, GIT_CONFIG_MAX_BYTES + 1, &c, &line), -EFBIG);
	assert_int_equal(line, 0);
	assert_int_equal(git_config_parse(buf, GIT_CONFIG_MAX_BYTES, &c, &line), 0);
	assert_int_equal(c.n, 0);
	git_config_free(&c);

	/* A long header shared by the most entries: memory stays linear in the input. */
	len = (size_t)sprintf(buf, "[a \"");
	memset(buf + len, 'x', header);
	len += header;
	len += (size_t)sprintf(buf + len, "\"]\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(buf + len, "k\n");
	assert_int_equal(git_config_parse(buf, len, &c, &line), 0);
	assert_int_equal(c.n, n);
	assert_int_equal(strlen(c.entries[n - 1].subsection), header);
	assert_int_equal(c.entries[n - 1].line, (int)n + 1);
	assert_int_equal(git_config_serialise(&c, NULL, &out, &out_len), 0);
	assert_true(out_len < header + 16 + n * 3);
	free(out);
	git_config_free(&c);
	len += (size_t)sprintf(buf + len, "k = v\n");
	assert_int_equal(git_config_parse(buf, len, &c, &line), -E2BIG);
	assert_int_equal(line, (int)n + 2);
	assert_null(c.entries);
	free(buf);
}

static void check_exec(const char *text, bool flagged)
{
	struct git_config c;
	const char *why;
	int line;

	if (git_config_parse(text, strlen(text), &c, &line))
		fail_msg("\"%s\": not parsed (line %d)", text, line);
	assert_int_equal(c.n, 1);
	why = git_config_exec_reason(&c.entries[0]);
	if (flagged != (why != NULL))
		fail_msg("\"%s\": %s", text, why ? why : "not flagged");
	git_config_free(&c);
}

static void test_exec_keys(void **state)
{
	static const char *const flagged[] = {
		"[core]hooksPath=/tmp/h",
		"[CORE]HOOKSPATH=x",
		"[core]fsmonitor=/tmp/hook",
		"[core]fsmonitor=2", /* an integer git reads as true: flagged, never missed */
		"[core]fsmonitor=\" true\"",
		"[core]sshCommand=ssh -i x",
		"[core]editor=vim",
		"[core]pager=less",
		"[core]askPass=/bin/x",
		"[core]gitProxy=proxy for example.com",
		"[core]alternateRefsCommand=x",
		"[sequence]editor=x",
		"[credential]helper=store",
		"[credential \"https://example.com\"]helper=x",
		"[filter \"lfs\"]clean=git-lfs clean -- %f",
		"[filter \"lfs\"]smudge=x",
		"[filter \"lfs\"]process=x",
		"[lfs \"customtransfer.x\"]path=/x",
		"[lfs]standalonetransferagent=x",
		"[lfs \"extension.y\"]clean=x",
		"[lfs \"extension.y\"]smudge=x",
		"[Filter.LFS]clean=x",
		"[diff]external=x",
		"[diff \"pdf\"]textconv=pdftotext",
		"[diff \"pdf\"]command=x",
		"[merge \"ours\"]driver=true",
		"[alias]x=!sh",
		"[alias]x=  !sh",
		"[alias]x=\"\t!sh\"",
		"[alias \"x\"]command=!sh",
		"[include]path=/tmp/x",
		"[includeIf \"gitdir:/x/\"]path=x",
		"[pager]log=less",
		"[pager]log=\"\"x",
		"[gpg]program=x",
		"[gpg \"ssh\"]program=x",
		"[gpg \"x509\"]program=x",
		"[gpg \"ssh\"]defaultKeyCommand=x",
		"[remote \"o\"]uploadpack=x",
		"[remote \"o\"]receivepack=x",
		"[remote \"o\"]vcs=x",
		"[remote \"o\"]url=ext::sh -c x",
		"[remote \"o\"]url=EXT::sh",
		"[remote \"o\"]pushurl=ext::sh -c x",
		"[submodule \"s\"]url=ext::x",
		"[url \"ext::sh -c x\"]insteadOf=https://",
		"[url \"ext::sh -c x\"]pushInsteadOf=https://",
		"[protocol]allow=always",
		"[protocol]allow=user",
		"[protocol]allow",
		"[protocol \"ext\"]allow=user",
		"[protocol \"ext\"]allow=always",
		"[protocol.ext]allow=always",
		"[submodule \"s\"]update=!x",
		"[difftool \"t\"]cmd=x",
		"[difftool \"t\"]path=x",
		"[mergetool \"t\"]cmd=x",
		"[mergetool \"t\"]path=x",
		"[man \"t\"]cmd=x",
		"[man \"t\"]path=x",
		"[web]browser=x",
		"[help]browser=x",
		"[instaweb]browser=x",
		"[instaweb]httpd=x",
		"[browser \"t\"]cmd=x",
		"[browser \"t\"]path=x",
		"[sendemail]smtpServer=/usr/sbin/sendmail",
		"[sendemail \"work\"]smtpServer=~/bin/x",
		"[sendemail]sendmailCmd=x",
		"[sendemail]toCmd=x",
		"[sendemail]ccCmd=x",
		"[sendemail]headerCmd=x",
		"[sendemail \"id\"]toCmd=x",
		"[imap]tunnel=x",
		"[interactive]diffFilter=x",
		"[trailer \"t\"]command=x",
		"[trailer \"t\"]cmd=x",
		"[uploadpack]packObjectsHook=x",
		"[hook \"h\"]command=x",
		"[gc]recentObjectsHook=x",
		"[init]templateDir=/tmp/t",
		"[tar \"tgz\"]command=gzip",
		"[guitool \"t\"]cmd=x",
	};
	static const char *const clean[] = {
		"[core]editorx=vim",
		"[core]hooksPathx=x",
		"[core \"x\"]editor=vim",
		"[core]fsmonitorHookVersion=2",
		"[core]fsmonitor=false",
		"[core]fsmonitor=true",
		"[core]fsmonitor=TRUE",
		"[core]fsmonitor=yes",
		"[core]fsmonitor=No",
		"[core]fsmonitor=on",
		"[core]fsmonitor=off",
		"[core]fsmonitor=1",
		"[core]fsmonitor=0",
		"[core]fsmonitor=",
		"[core]fsmonitor",
		"[alias]st=status",
		"[alias]st=\"log -1 !x\"",
		"[alias \"x\"]command=status",
		"[filter \"lfs\"]required=true",
		"[filter]clean=x",
		"[diff]textconv=x",
		"[diff]tool=vimdiff",
		"[diff \"pdf\"]binary=true",
		"[merge]driver=x",
		"[merge]tool=x",
		"[merge \"ours\"]name=x",
		"[pager]log=false",
		"[pager]log",
		"[pager]log=true",
		"[remote \"o\"]url=https://example.com/x",
		"[remote \"o\"]url=foo::ext::x",
		"[remote \"o\"]fetch=+refs/heads/*:refs/remotes/o/*",
		"[url \"https://x/\"]insteadOf=ext::",
		"[protocol]allow=never",
		"[protocol]allow=NEVER",
		"[protocol \"ext\"]allow=never",
		"[protocol \"file\"]allow=always",
		"[protocol \"EXT\"]allow=always",
		"[gpg]format=ssh",
		"[gpg \"SSH\"]defaultKeyCommand=x",
		"[gpg \"ssh\"]allowedSignersFile=x",
		"[sendemail]smtpServer=smtp.example.com",
		"[sendemail]to=x",
		"[submodule \"s\"]update=rebase",
		"[credential]helperx=x",
		"[credential]username=x",
		"[include]pathx=x",
		"[include \"x\"]path=x",
		"[includeIf \"x\"]pathx=x",
		"[receive]procReceiveRefs=refs/for",
		"[man]viewer=x",
		"[user]name=x",
		"[http]proxy=http://x",
		"[hook \"h\"]event=pre-commit",
		"k=v",
	};

	for (size_t i = 0; i < sizeof(flagged) / sizeof(flagged[0]); i++)
		check_exec(flagged[i], true);
	for (size_t i = 0; i < sizeof(clean) / sizeof(clean[0]); i++)
		check_exec(clean[i], false);
	assert_null(git_config_exec_reason(NULL));
}

/* The unskipped entries of a, in order, are b's. */
static bool same_unskipped(const struct git_config *a, const bool *skip, const struct git_config *b)
{
	size_t j = 0;

	for (size_t i = 0; i < a->n; i++) {
		if (skip && skip[i])
			continue;
		if (j >= b->n || !entry_eq(&a->entries[i], &b->entries[j]))
			return false;
		j++;
	}
	return j == b->n;
}

/* parse(serialise(c without skip)) is c without skip, and serialising that again gives the same text. */
static void check_round_trip(const char *text, size_t len, const bool *skip)
{
	struct git_config a, b;
	char *out = NULL, *again = NULL, buf[1024];
	size_t out_len, again_len;
	int line;

	if (git_config_parse(text, len, &a, &line))
		return;
	assert_int_equal(git_config_serialise(&a, skip, &out, &out_len), 0);
	assert_int_equal(strlen(out), out_len);
	if (git_config_parse(out, out_len, &b, &line))
		fail_msg("\"%s\": serialised as \"%s\", not read back (line %d)", shown(text, len, buf, sizeof(buf)),
			 out, line);
	if (!same_unskipped(&a, skip, &b))
		fail_msg("\"%s\": serialised as \"%s\", read back differently", shown(text, len, buf, sizeof(buf)),
			 out);
	assert_int_equal(git_config_serialise(&b, NULL, &again, &again_len), 0);
	assert_int_equal(again_len, out_len);
	assert_memory_equal(again, out, out_len);
	free(out);
	free(again);
	git_config_free(&a);
	git_config_free(&b);
}

static void test_serialise_form(void **state)
{
	static const char text[] = "k0 = top\n[core]\n\tbare\n\teditor = vim\n[remote \"o\"]\n\turl = x\n"
				   "[core]\n\tpager = less\n[a \"q\\\"b\\\\\"]k = \"a\\\"b\\\\c\\nd\\te\\bf\"\n"
				   "[ \"s\"]k\n";
	static const char want[] = "\tk0 = \"top\"\n[core]\n\tbare\n\teditor = \"vim\"\n[remote \"o\"]\n"
				   "\turl = \"x\"\n[core]\n\tpager = \"less\"\n[a \"q\\\"b\\\\\"]\n"
				   "\tk = \"a\\\"b\\\\c\\nd\\te\\bf\"\n[ \"s\"]\n\tk\n";
	bool skip[7] = { false, false, true, false, true, false, false };
	struct git_config c;
	char *out = NULL;
	size_t len;
	int line;

	assert_int_equal(git_config_parse(text, sizeof(text) - 1, &c, &line), 0);
	assert_int_equal(c.n, 7);
	assert_int_equal(git_config_serialise(&c, NULL, &out, &len), 0);
	assert_string_equal(out, want);
	free(out);
	/* Skipping core.editor and core.pager: the second [core] goes with its only entry. */
	assert_int_equal(git_config_serialise(&c, skip, &out, &len), 0);
	assert_string_equal(out, "\tk0 = \"top\"\n[core]\n\tbare\n[remote \"o\"]\n\turl = \"x\"\n"
				 "[a \"q\\\"b\\\\\"]\n\tk = \"a\\\"b\\\\c\\nd\\te\\bf\"\n[ \"s\"]\n\tk\n");
	free(out);
	skip[2] = false;
	skip[3] = true;
	skip[4] = false;
	assert_int_equal(git_config_serialise(&c, skip, &out, &len), 0);
	assert_string_equal(out, "\tk0 = \"top\"\n[core]\n\tbare\n\teditor = \"vim\"\n\tpager = \"less\"\n"
				 "[a \"q\\\"b\\\\\"]\n\tk = \"a\\\"b\\\\c\\nd\\te\\bf\"\n[ \"s\"]\n\tk\n");
	free(out);
	git_config_free(&c);

	assert_int_equal(git_config_parse("", 0, &c, &line), 0);
	assert_int_equal(git_config_serialise(&c, NULL, &out, &len), 0);
	assert_string_equal(out, "");
	assert_int_equal(len, 0);
	free(out);
	git_config_free(&c);
	git_config_free(&c);
}

static void test_serialise_refuses_what_parse_never_makes(void **state)
{
	struct git_config_entry e[2] = {
		{ "a", NULL, "k", "v", 1 },
		{ "", NULL, "k", "v", 2 },
	};
	struct git_config c = { e, 2 };
	char *out = NULL;
	size_t len;

	/* A key without a section after a section's. */
	assert_int_equal(git_config_serialise(&c, NULL, &out, &len), -EINVAL);
	assert_null(out);
	e[1].section = "A";
	assert_int_equal(git_config_serialise(&c, NULL, &out, &len), -EINVAL);
	e[1].section = "a.b";
	assert_int_equal(git_config_serialise(&c, NULL, &out, &len), -EINVAL);
	e[1].section = "b";
	e[1].key = "1k";
	assert_int_equal(git_config_serialise(&c, NULL, &out, &len), -EINVAL);
	e[1].key = "k.x";
	assert_int_equal(git_config_serialise(&c, NULL, &out, &len), -EINVAL);
	e[1].key = "k";
	e[1].subsection = "x\ny";
	assert_int_equal(git_config_serialise(&c, NULL, &out, &len), -EINVAL);
	e[1].subsection = "x\"y";
	assert_int_equal(git_config_serialise(&c, NULL, &out, &len), 0);
	assert_string_equal(out, "[a]\n\tk = \"v\"\n[b \"x\\\"y\"]\n\tk = \"v\"\n");
	free(out);
}

/* A small deterministic generator of configs near git's grammar's edges. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static const char *pick(uint64_t *s, const char *const *v, size_t n)
{
	return v[rnd(s) % n];
}

#define PICK(s, v) pick(s, v, sizeof(v) / sizeof(v[0]))

/*
 * One config in buf (at most size - 1 bytes). verbatim: fragments whose
 * unquoted inner tabs and CRs git before 2.45 reads as spaces are allowed.
 */
static size_t gen_config(uint64_t *s, char *buf, size_t size, bool verbatim)
{
	static const char *const sections[] = { "core", "a", "Sec-1", "x.y", "a.B.c", "remote", "alias", "." };
	static const char *const subs[] = { "o", "B", " ", ".", "\\\"", "\\\\", "\\x", ";#", "\t", "\xc3\xa9",
					    "", "ext::sh", "\r" };
	static const char *const keys[] = { "k", "Key", "k-1", "editor", "hooksPath", "a9", "url", "x" };
	static const char *const seps[] = { " = ", "=", "\t=\t", " =  ", "= " };
	static const char *const values[] = {
		"word", "two  words", "\"quoted ; # \"", "\"\"", " ", "  ", "\\t", "\\n", "\\\\", "\\\"",
		"# comment", "; c", "\\\n", "\\\r\n", "\"\t\"", "!sh -c", "ext::x", "\"a\\\nb\"", "\xc3\xa9",
		"x\ty", "x\ry",
	};
	static const char *const mut_verbatim = "[]\"\\=\r\n\t #;_\xef.a";
	static const char *const mut_spaces = "[]\"\\=\n #;_\xef.a";
	const char *mut = verbatim ? mut_verbatim : mut_spaces;
	size_t len = 0, lines = 1 + rnd(s) % 8, nvals = sizeof(values) / sizeof(values[0]);
	char tmp[256];

#define ADD(str)                                                                \
	do {                                                                    \
		const char *s_ = (str);                                         \
		size_t n_ = strlen(s_);                                         \
		if (len + n_ < size) {                                          \
			memcpy(buf + len, s_, n_);                              \
			len += n_;                                              \
		}                                                               \
	} while (0)

	if (rnd(s) % 10 == 0)
		ADD("\xef\xbb\xbf");
	for (size_t l = 0; l < lines; l++) {
		unsigned kind = (unsigned)(rnd(s) % 10);

		if (rnd(s) % 3 == 0)
			ADD(rnd(s) % 2 ? " " : "\t");
		if (kind < 3) {
			if (rnd(s) % 2) {
				snprintf(tmp, sizeof(tmp), "[%s]", PICK(s, sections));
			} else {
				char sub[64] = "";

				for (unsigned i = rnd(s) % 4; i; i--)
					strcat(sub, PICK(s, subs));
				snprintf(tmp, sizeof(tmp), "[%s%s\"%s\"]", rnd(s) % 8 ? PICK(s, sections) : "",
					 rnd(s) % 4 ? " " : " \t", sub);
			}
			ADD(tmp);
			if (rnd(s) % 4 == 0)
				ADD(" k = v");
		} else if (kind < 9) {
			ADD(PICK(s, keys));
			if (rnd(s) % 5) {
				ADD(PICK(s, seps));
				for (unsigned i = 1 + rnd(s) % 4; i; i--) {
					/* The last two keep unquoted whitespace inside: only where git keeps it. */
					ADD(values[rnd(s) % (verbatim ? nvals : nvals - 2)]);
				}
			}
		} else {
			ADD(rnd(s) % 2 ? "# c" : "; c \"");
		}
		ADD(rnd(s) % 4 ? "\n" : "\r\n");
	}
	for (unsigned m = rnd(s) % 3 == 0 ? 1 + rnd(s) % 2 : 0; m && len + 1 < size; m--) {
		size_t at = rnd(s) % (len + 1);

		memmove(buf + at + 1, buf + at, len - at);
		buf[at] = mut[rnd(s) % strlen(mut)];
		len++;
	}
	if (len && rnd(s) % 6 == 0)
		len--; /* no final newline, or a line cut short */
	buf[len] = '\0';
	return len;
#undef ADD
}

static void test_round_trip(void **state)
{
	static const char *const texts[] = {
		"[core]\n\tbare = false\n\teditor = vim\n",
		"[a \"q\\\"b\\\\c\"]\nk=1\n",
		"[a.B \"C\"]k=1",
		"[ \"s\"]k=1\n[.]j\n[..x]y=z",
		"k = v\n[a]j=1",
		"[a]k = a\\tb\\nc\\bd\\\\e\\\"f\n",
		"[a]k = \"  a \" \n",
		"[a]k =   a  b\t c   \n",
		"[a]k = x\ry\n",
		"[a]k=\"\r\"\n",
		"[a \"\r\"]k=\"x\r\"y\n",
		"[a]k = \x01\x7f\xff\xc3\xa9[]=\n",
		"\xef\xbb\xbf[a]k=1",
		"[a]k=\"\\\\\\n\\\"\\\\\"",
	};
	char buf[1024];
	bool skip[64];
	uint64_t s = 0x9e3779b97f4a7c15ull;
	size_t ok = 0;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		check_round_trip(texts[i], strlen(texts[i]), NULL);
		memset(skip, 1, sizeof(skip));
		check_round_trip(texts[i], strlen(texts[i]), skip);
	}
	for (int i = 0; i < 20000; i++) {
		size_t len = gen_config(&s, buf, sizeof(buf), true);
		struct git_config c;
		int line;

		for (size_t j = 0; j < sizeof(skip); j++)
			skip[j] = rnd(&s) % 3 == 0;
		if (!git_config_parse(buf, len, &c, &line)) {
			ok++;
			assert_true(c.n <= sizeof(skip));
			git_config_free(&c);
		}
		check_round_trip(buf, len, NULL);
		check_round_trip(buf, len, skip);
	}
	/* The generator mostly writes what git reads, and sometimes what it does not. */
	print_message("round trip: %zu of 20000 generated configs read\n", ok);
	assert_true(ok > 10000 && ok < 18000);
}

/* Skipping the executing entries leaves exactly the others. */
static void test_skip_exec(void **state)
{
	static const char text[] = "[core]\n\tbare = false\n\thooksPath = /tmp/h\n\teditor = vim\n"
				   "[alias]\n\tst = status\n\tx = !sh -c id\n[user]\n\tname = n\n"
				   "[filter \"lfs\"]\n\tclean = x\n\trequired = true\n";
	struct git_config c, d;
	bool skip[16] = { 0 };
	char *out = NULL;
	size_t len, flagged = 0;
	int line;

	assert_int_equal(git_config_parse(text, sizeof(text) - 1, &c, &line), 0);
	for (size_t i = 0; i < c.n; i++)
		flagged += skip[i] = git_config_exec_reason(&c.entries[i]) != NULL;
	assert_int_equal(flagged, 4);
	assert_int_equal(git_config_serialise(&c, skip, &out, &len), 0);
	assert_string_equal(out, "[core]\n\tbare = \"false\"\n[alias]\n\tst = \"status\"\n[user]\n"
				 "\tname = \"n\"\n[filter \"lfs\"]\n\trequired = \"true\"\n");
	assert_int_equal(git_config_parse(out, len, &d, &line), 0);
	assert_true(same_unskipped(&c, skip, &d));
	for (size_t i = 0; i < d.n; i++)
		assert_null(git_config_exec_reason(&d.entries[i]));
	free(out);
	git_config_free(&c);
	git_config_free(&d);
}

/* ---- git itself, where it is installed ---- */

/* Generated configs read by git too (two git runs each); -D for a longer run. */
#ifndef GIT_DIFF_CASES
#define GIT_DIFF_CASES 800
#endif
#ifndef GIT_DIFF_SEED
#define GIT_DIFF_SEED 0x2545f4914f6cdd1dull
#endif

struct git_env {
	char dir[64];
	bool verbatim; /* git 2.45 or later: unquoted inner whitespace kept as is */
};

static bool git_setup(struct git_env *g)
{
	FILE *p = popen("git --version 2>/dev/null", "r");
	int major = 0, minor = 0;

	if (!p)
		return false;
	if (fscanf(p, "git version %d.%d", &major, &minor) != 2)
		major = 0;
	pclose(p);
	if (!major)
		return false;
	g->verbatim = major > 2 || (major == 2 && minor >= 45);
	snprintf(g->dir, sizeof(g->dir), "/tmp/test_git_config.XXXXXX");
	assert_non_null(mkdtemp(g->dir));
	return true;
}

static void git_teardown(const struct git_env *g)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/config", g->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/err", g->dir);
	unlink(path);
	rmdir(g->dir);
}

/*
 * git config --list --null of text: its exit status, its output in *out,
 * and the line of "bad config line N" in *bad_line (0 if none).
 */
static int git_list(const struct git_env *g, const char *text, size_t len, char **out, size_t *out_len,
		    int *bad_line)
{
	char path[128], cmd[512], errbuf[512];
	size_t cap = 4096, n = 0;
	FILE *f, *p;
	char *buf;
	const char *at;
	int status;

	snprintf(path, sizeof(path), "%s/config", g->dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && env -u GIT_CONFIG_PARAMETERS -u GIT_CONFIG_COUNT -u GIT_DIR HOME='%s' "
		 "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_CEILING_DIRECTORIES=/ LC_ALL=C "
		 "git config --no-includes --file config --list --null 2>err",
		 g->dir, g->dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	buf = malloc(cap);
	assert_non_null(buf);
	for (;;) {
		size_t got;

		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		got = fread(buf + n, 1, cap - n, p);
		if (!got)
			break;
		n += got;
	}
	status = pclose(p);
	*out = buf;
	*out_len = n;
	*bad_line = 0;
	snprintf(path, sizeof(path), "%s/err", g->dir);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(errbuf, 1, sizeof(errbuf) - 1, f);
	errbuf[n] = '\0';
	fclose(f);
	at = strstr(errbuf, "bad config line ");
	if (at)
		*bad_line = atoi(at + strlen("bad config line "));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

/* Our entries as git --list --null prints them: "name\nvalue\0", or "name\0" for a bare key. */
static char *our_list(const struct git_config *c, size_t *len)
{
	size_t cap = 1, n = 0;
	char *buf;

	for (size_t i = 0; i < c->n; i++) {
		const struct git_config_entry *e = &c->entries[i];

		cap += strlen(e->section) + (e->subsection ? strlen(e->subsection) : 0) + strlen(e->key) +
		       (e->value ? strlen(e->value) : 0) + 4;
	}
	buf = malloc(cap);
	assert_non_null(buf);
	for (size_t i = 0; i < c->n; i++) {
		const struct git_config_entry *e = &c->entries[i];

		if (e->section[0] || e->subsection)
			n += (size_t)sprintf(buf + n, "%s.", e->section);
		if (e->subsection)
			n += (size_t)sprintf(buf + n, "%s.", e->subsection);
		n += (size_t)sprintf(buf + n, "%s", e->key);
		if (e->value)
			n += (size_t)sprintf(buf + n, "\n%s", e->value);
		buf[n++] = '\0';
	}
	*len = n;
	return buf;
}

/*
 * text read by us and by git: the same entries, or both refuse it at the
 * same line. spaces: git reads each unquoted inner tab or CR as a space (git
 * before 2.45; text has no other tab or CR). Returns parsed.
 */
static bool check_against_git(const struct git_env *g, const char *text, size_t len, bool spaces)
{
	struct git_config c;
	char *theirs, *ours, *out, shown_buf[1024];
	size_t theirs_len, ours_len, out_len;
	int line, git_line, rc, err;

	err = git_config_parse(text, len, &c, &line);
	rc = git_list(g, text, len, &theirs, &theirs_len, &git_line);
	shown(text, len, shown_buf, sizeof(shown_buf));
	if (err) {
		if (!rc)
			fail_msg("\"%s\": refused (%d, line %d), git reads it", shown_buf, err, line);
		if (err != -EINVAL || line != git_line)
			fail_msg("\"%s\": refused at line %d (%d), git at line %d", shown_buf, line, err, git_line);
		free(theirs);
		return false;
	}
	if (rc)
		fail_msg("\"%s\": parsed, git refuses it (line %d)", shown_buf, git_line);
	ours = our_list(&c, &ours_len);
	if (spaces)
		for (size_t i = 0; i < theirs_len; i++)
			if (theirs[i] == ' ' && (ours[i] == '\t' || ours[i] == '\r'))
				theirs[i] = ours[i];
	if (ours_len != theirs_len || memcmp(ours, theirs, ours_len)) {
		char a[1024], b[1024];

		fail_msg("\"%s\": ours \"%s\", git's \"%s\"", shown_buf, shown(ours, ours_len, a, sizeof(a)),
			 shown(theirs, theirs_len, b, sizeof(b)));
	}
	free(theirs);
	/* Quoted and escaped, the value is read the same by every git. */
	assert_int_equal(git_config_serialise(&c, NULL, &out, &out_len), 0);
	rc = git_list(g, out, out_len, &theirs, &theirs_len, &git_line);
	if (rc || ours_len != theirs_len || memcmp(ours, theirs, ours_len)) {
		char a[1024];

		fail_msg("\"%s\": serialised \"%s\", git reads it differently (status %d)", shown_buf,
			 shown(out, out_len, a, sizeof(a)), rc);
	}
	free(theirs);
	free(ours);
	free(out);
	git_config_free(&c);
	return true;
}

static void test_against_git(void **state)
{
	static const char *const texts[] = {
		/* Read the same by every git. */
		"[core]\n\tbare = false\n\teditor = vim\n",
		"[CoRe]\n\tEdItOr = Vim\n",
		"[remote \"Origin\"]\n\turl = x\n",
		"[a \"q\\\"b\\\\c\"]\nk=1\n",
		"[a \"\\x\\y\\t\"]k=1",
		"[a \"x y;#=[]\t.\"]k=1",
		"[a \t \"b\"]k=1",
		"[a\r\"b\"]k=1",
		"[Remote.Origin]\nurl=x\n",
		"[a.b.C]k=1",
		"[a.B \"C\"]k=1",
		"[a \"\"]k=1",
		"[a.]k=1",
		"[ \"s\"]k=1",
		"[.]k=1",
		"[..x]k=1",
		"[core] editor = vim\n",
		"[a][b]k",
		"[a] # c\n k",
		"[a]k=1[b]j=2",
		"k = v\n[a]j=1",
		"[a]K9-x\t=\tv",
		"[core]\n\tbare   \t\n",
		"[a]k =\n",
		"[a]k = ;c\n",
		"# c\n; c\n[a] ; c\nk = v # c\nj = v;c\n",
		"[a]k = \"v # not; \" # c",
		"[a]k = x\"#\"y",
		"[a]k = \"  a \" \n",
		"[a]k = x \"\" \n",
		"[a]k = \"\" x\n",
		"[a]k = \" \"x\" \"\n",
		"[a]k = a\"b\"c \"d\"\n",
		"[a]k = \"a\tb\"\n",
		"[a]k = a\\tb\\nc\\bd\\\\e\\\"f\n",
		"[a]\nk = 1\\\n  2\nj = 3\n",
		"[a]k = \"a\\\nb\"",
		"[a]k = a \\\n",
		"[a]k = a\\\n# not a comment\n",
		"[a]k=x\\",
		"[a]k = a # c \\\nj",
		"[a]k = \x01\x7f\xff\xc3\xa9[]=\n",
		"\xef\xbb\xbf[a]k=1",
		"\xef\xbb\xbf\n[a]k=1",
		"[a]\r\nk = v\r\nj\r\n",
		"[a]\r\nk = a\\\r\nb\r\nj=1",
		"[a]k = x\r\r\n",
		"[a]k=1\r",
		"\r[a]\r\rk=\"\r\"",
		"[a \"\r\"]k=\"x\r\"y\n",
		/* Refused, at git's line. */
		"[a", "[a\n]", "[a \"b\"\n", "[a \"b\" ]", "[a \"b\n\"]", "[a \"b\\\n\"]", "[a \"b", "[]",
		"[a b]", "[a_b]", "[a\"b\"]", "[a.b c]", "[a]]", "[a]\n1k=2", "[a]\nk_x=1", "[a]\nk # c",
		"[a]\nk ; c", "[a]\nk : v", "[a]\n=1", "[a]\n-k=1", "[a]\nk\r=1", "[a]\nk.x=1",
		"[a]\n\n\nk = \"open\n", "[a]\nk = \"open\\\nstill\n", "[a]\nk = \"open", "[a]\nk = \\q",
		"[a]\nk = \\ x", "[a]\nk = \\\rx", "[a]\nk = \"\\a\"", "[a]\nk = 1\\\n\\z", "\xef\xbb[a]k=1",
		"\xef", "[a]k=1\n\xef\xbb\xbf", "\xbb\xbf[a]", "[a]\n\xc3\xa9=1",
	};
	/* Unquoted tabs and CRs inside a value: git before 2.45 reads each as a space, then on as is. */
	static const char *const verbatim_texts[] = {
		"[a]k =   a  b\t c   \n",
		"[a]k = x\ry\n",
		"[a]k = a\t\\\n\tb\n",
	};
	struct git_env g;
	char buf[1024];
	uint64_t s = GIT_DIFF_SEED;
	size_t parsed = 0, n = GIT_DIFF_CASES;

	if (!git_setup(&g))
		skip();
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		check_against_git(&g, texts[i], strlen(texts[i]), false);
	for (size_t i = 0; i < sizeof(verbatim_texts) / sizeof(verbatim_texts[0]); i++)
		check_against_git(&g, verbatim_texts[i], strlen(verbatim_texts[i]), !g.verbatim);
	for (size_t i = 0; i < n; i++) {
		size_t len = gen_config(&s, buf, sizeof(buf), g.verbatim);

		/* A byte put between CR and LF makes a lone CR: inner whitespace to git. */
		parsed += check_against_git(&g, buf, len, !g.verbatim);
	}
	print_message("against git: %zu fixed, %zu generated (%zu read, %zu refused by both)%s\n",
		      sizeof(texts) / sizeof(texts[0]) + sizeof(verbatim_texts) / sizeof(verbatim_texts[0]), n,
		      parsed, n - parsed, g.verbatim ? "" : "; inner tabs and CRs read as spaces by this git");
	git_teardown(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sections_and_keys),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_bom_crlf),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_exec_keys),
		cmocka_unit_test(test_serialise_form),
		cmocka_unit_test(test_serialise_refuses_what_parse_never_makes),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_skip_exec),
		cmocka_unit_test(test_against_git),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
