// SPDX-License-Identifier: MIT
/*
 * git's config file format, read step by step as git's config.c reads it:
 * the same character classes, the same order of checks, the same line count
 * for "bad config line N". What git rejects is -EINVAL; what git accepts is
 * read to the same names and values (git-config --list prints them), but
 * for a NUL byte (refused here; git reads on, and cuts a value at it).
 * Bounded: the input's size and entry count are capped, every buffer is no
 * longer than the input, nothing recurses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "git_config.h"

/* git's own ctype (ctype.c): ASCII whatever the locale; \v and \f are not spaces. */
static bool g_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool g_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool g_keychar(int c)
{
	return g_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static int g_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* The input as git's get_next_char hands it out: CRLF as '\n', the end as a '\n' that sets eof. */
struct src {
	const unsigned char *p;
	size_t len, pos;
	int line; /* git's linenr: bumped by each '\n' and by the end */
	bool eof;
};

static int next_char(struct src *s)
{
	int c;

	if (s->pos >= s->len) {
		s->eof = true;
		s->line++;
		return '\n';
	}
	c = s->p[s->pos++];
	/* A lone CR is a character (a space to the parser); CRLF is a newline. */
	if (c == '\r' && s->pos < s->len && s->p[s->pos] == '\n') {
		s->pos++;
		c = '\n';
	}
	if (c == '\n')
		s->line++;
	return c;
}

/* Each byte put in consumes at least one byte read, so len + 1 bytes always suffice. */
struct text {
	char *p;
	size_t len, cap;
};

static int put(struct text *t, int c)
{
	if (t->len + 1 >= t->cap)
		return -EOVERFLOW;
	t->p[t->len++] = (char)c;
	return 0;
}

struct parser {
	struct src s;
	struct text var; /* the header's name as git keeps it: "section" or "section.subsection" */
	struct text key, val;
	struct git_config *out;
	size_t cap; /* entries allocated */
	/* The current header's strings, made at its first entry and shared by all of them. */
	char *section, *subsection;
	int bad_line;
};

/* get_extended_base_var: [section "subsection"], c the space after the name. */
static int get_extended_base_var(struct parser *p, int c)
{
	do {
		if (c == '\n')
			goto incomplete;
		c = next_char(&p->s);
	} while (g_space(c));
	if (c != '"')
		return -EINVAL;
	if (put(&p->var, '.'))
		return -EOVERFLOW;
	for (;;) {
		c = next_char(&p->s);
		if (c == '\n')
			goto incomplete;
		if (c == '"')
			break;
		/* Any character may be escaped, as git reads it (\" and \\ are the documented ones). */
		if (c == '\\') {
			c = next_char(&p->s);
			if (c == '\n')
				goto incomplete;
		}
		if (put(&p->var, c))
			return -EOVERFLOW;
	}
	/* No space before the ']'; the line git names is the one after a newline here. */
	return next_char(&p->s) == ']' ? 0 : -EINVAL;
incomplete:
	p->s.line--;
	return -EINVAL;
}

/* get_base_var: after '['; lower-cases the name, "[a.B]" included (the deprecated form). */
static int get_base_var(struct parser *p)
{
	for (;;) {
		int c = next_char(&p->s);

		if (p->s.eof)
			return -EINVAL;
		if (c == ']')
			return 0;
		if (g_space(c))
			return get_extended_base_var(p, c);
		if (!g_keychar(c) && c != '.')
			return -EINVAL;
		if (put(&p->var, g_lower(c)))
			return -EOVERFLOW;
	}
}

/*
 * parse_value, as git since 2.45 has it: unquoted whitespace inside a value
 * kept verbatim (older git turned each such tab or CR into a space), leading
 * and trailing unquoted whitespace dropped, comments end the value outside
 * quotes, backslash-newline continues it.
 */
static int parse_value(struct parser *p)
{
	bool quote = false, comment = false;
	size_t trim_len = 0;

	p->val.len = 0;
	for (;;) {
		int c = next_char(&p->s);

		if (c == '\n') {
			if (quote) {
				p->s.line--;
				return -EINVAL;
			}
			if (trim_len)
				p->val.len = trim_len;
			return 0;
		}
		if (comment)
			continue;
		if (g_space(c) && !quote) {
			if (!trim_len)
				trim_len = p->val.len;
			if (p->val.len && put(&p->val, c))
				return -EOVERFLOW;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		trim_len = 0;
		if (c == '\\') {
			c = next_char(&p->s);
			switch (c) {
			case '\n':
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return -EINVAL;
			}
		} else if (c == '"') {
			quote = !quote;
			continue;
		}
		if (put(&p->val, c))
			return -EOVERFLOW;
	}
}

/* The header's section and subsection: git's name split at its first dot. */
static int header_strings(struct parser *p)
{
	const char *dot = memchr(p->var.p, '.', p->var.len);
	size_t n = dot ? (size_t)(dot - p->var.p) : p->var.len;

	p->section = strndup(p->var.p, n);
	if (dot)
		p->subsection = strndup(dot + 1, p->var.len - n - 1);
	if (!p->section || (dot && !p->subsection)) {
		free(p->section);
		free(p->subsection);
		p->section = p->subsection = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int add_entry(struct parser *p, int line, bool has_value)
{
	struct git_config *c = p->out;
	struct git_config_entry *e;
	bool fresh = false;

	if (c->n >= GIT_CONFIG_MAX_ENTRIES)
		return -E2BIG;
	if (c->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;

		if (cap > GIT_CONFIG_MAX_ENTRIES)
			cap = GIT_CONFIG_MAX_ENTRIES;
		e = realloc(c->entries, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		c->entries = e;
		p->cap = cap;
	}
	if (!p->section) {
		if (header_strings(p))
			return -ENOMEM;
		fresh = true;
	}
	e = &c->entries[c->n];
	e->key = strndup(p->key.p, p->key.len);
	e->value = has_value ? strndup(p->val.p, p->val.len) : NULL;
	if (!e->key || (has_value && !e->value)) {
		free(e->key);
		free(e->value);
		if (fresh) {
			free(p->section);
			free(p->subsection);
			p->section = p->subsection = NULL;
		}
		return -ENOMEM;
	}
	e->section = p->section;
	e->subsection = p->subsection;
	e->line = line;
	c->n++;
	return 0;
}

/* get_value: an entry, c its first letter; the name ends at the first non-key character. */
static int get_value(struct parser *p, int c)
{
	int line = p->s.line, err;
	bool has_value = false;

	p->key.len = 0;
	if (put(&p->key, g_lower(c)))
		return -EOVERFLOW;
	for (;;) {
		c = next_char(&p->s);
		if (p->s.eof || !g_keychar(c))
			break;
		if (put(&p->key, g_lower(c)))
			return -EOVERFLOW;
	}
	while (c == ' ' || c == '\t')
		c = next_char(&p->s);
	/* Only a newline ends a bare key: "key # comment" is an error to git. */
	if (c != '\n') {
		if (c != '=')
			return -EINVAL;
		err = parse_value(p);
		if (err)
			return err;
		has_value = true;
	}
	err = add_entry(p, line, has_value);
	if (err == -E2BIG)
		p->bad_line = line;
	return err;
}

static int parse(struct parser *p)
{
	static const unsigned char bom[] = { 0xef, 0xbb, 0xbf };
	size_t bom_at = 0;
	bool bom_done = false, comment = false;
	int err;

	for (;;) {
		int c = next_char(&p->s);

		/* A UTF-8 BOM at the start is skipped; part of one is an error. */
		if (!bom_done) {
			if (c == bom[bom_at]) {
				bom_done = ++bom_at == sizeof(bom);
				continue;
			}
			if (bom_at)
				return -EINVAL;
			bom_done = true;
		}
		if (c == '\n') {
			if (p->s.eof)
				return 0;
			comment = false;
			continue;
		}
		if (comment || g_space(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[') {
			p->var.len = 0;
			err = get_base_var(p);
			if (err)
				return err;
			if (!p->var.len)
				return -EINVAL;
			/* The previous header's strings belong to its entries now. */
			p->section = p->subsection = NULL;
			continue;
		}
		if (!g_alpha(c))
			return -EINVAL;
		err = get_value(p, c);
		if (err)
			return err;
	}
}

int git_config_parse(const char *buf, size_t len, struct git_config *out, int *err_line)
{
	struct parser p = { 0 };
	const char *nul;
	int err, line = 0;

	out->entries = NULL;
	out->n = 0;
	if (len > GIT_CONFIG_MAX_BYTES) {
		err = -EFBIG;
		goto cleanup;
	}
	/* git would read a NUL as a character and then cut the value at it: refused. */
	nul = len ? memchr(buf, 0, len) : NULL;
	if (nul) {
		line = 1;
		for (const char *q = buf; q < nul; q++)
			line += *q == '\n';
		err = -EINVAL;
		goto cleanup;
	}
	p.s = (struct src){ .p = (const unsigned char *)buf, .len = len, .line = 1 };
	p.out = out;
	p.var.cap = p.key.cap = p.val.cap = len + 2;
	p.var.p = malloc(p.var.cap);
	p.key.p = malloc(p.key.cap);
	p.val.p = malloc(p.val.cap);
	if (!p.var.p || !p.key.p || !p.val.p) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = parse(&p);
	/* A buffer bound that did not hold (it always holds): refused, as unreadable. */
	if (err == -EOVERFLOW)
		err = -EINVAL;
	if (err == -EINVAL)
		line = p.s.line;
	else if (err == -E2BIG)
		line = p.bad_line;
cleanup:
	free(p.var.p);
	free(p.key.p);
	free(p.val.p);
	if (err)
		git_config_free(out);
	if (err_line)
		*err_line = err ? line : 0;
	return err;
}

void git_config_free(struct git_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		struct git_config_entry *e = &c->entries[i];
		const struct git_config_entry *prev = i ? e - 1 : NULL;

		/* A header's strings are shared by its entries, which are consecutive. */
		if (!prev || prev->section != e->section)
			free(e->section);
		if (!prev || prev->subsection != e->subsection)
			free(e->subsection);
		free(e->key);
		free(e->value);
	}
	free(c->entries);
	c->entries = NULL;
	c->n = 0;
}

/* Output, measured first (p NULL) then written: one allocation, no growth. */
struct sink {
	char *p;
	size_t len;
};

static void emit(struct sink *o, const char *s, size_t n)
{
	if (o->p)
		memcpy(o->p + o->len, s, n);
	o->len += n;
}

/* Inside double quotes: what git's parse_value reads back byte for byte. */
static void emit_quoted(struct sink *o, const char *s, bool value)
{
	emit(o, "\"", 1);
	for (; *s; s++) {
		const char *esc = NULL;

		switch (*s) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		/* In a subsection these are plain characters; in a value, escapes read more safely. */
		case '\n':
			esc = value ? "\\n" : NULL;
			break;
		case '\t':
			esc = value ? "\\t" : NULL;
			break;
		case '\b':
			esc = value ? "\\b" : NULL;
			break;
		}
		if (esc)
			emit(o, esc, 2);
		else
			emit(o, s, 1);
	}
	emit(o, "\"", 1);
}

static bool valid_name(const char *s, bool first_alpha)
{
	if (first_alpha && !g_alpha((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!g_keychar((unsigned char)*s) || (*s >= 'A' && *s <= 'Z'))
			return false;
	return true;
}

/* Would git read this entry back as itself? Always true of a parsed one. */
static bool valid_entry(const struct git_config_entry *e)
{
	return e->section && e->key && valid_name(e->section, false) && valid_name(e->key, true) &&
	       (!e->subsection || !strchr(e->subsection, '\n'));
}

static bool same_header(const struct git_config_entry *a, const struct git_config_entry *b)
{
	if (strcmp(a->section, b->section))
		return false;
	if (!a->subsection || !b->subsection)
		return a->subsection == b->subsection;
	return !strcmp(a->subsection, b->subsection);
}

static int write_config(const struct git_config *c, const bool *skip, struct sink *o)
{
	const struct git_config_entry *prev = NULL;
	bool in_section = false;

	for (size_t i = 0; i < c->n; i++) {
		const struct git_config_entry *e = &c->entries[i];

		if (skip && skip[i])
			continue;
		if (!valid_entry(e))
			return -EINVAL;
		if (!e->section[0] && !e->subsection) {
			/* Keys before any header: only a prefix can be written back as one. */
			if (in_section)
				return -EINVAL;
		} else if (!in_section || !same_header(prev, e)) {
			emit(o, "[", 1);
			emit(o, e->section, strlen(e->section));
			/* "[ \"sub\"]" for an empty section reads back as git read it. */
			if (e->subsection) {
				emit(o, " ", 1);
				emit_quoted(o, e->subsection, false);
			}
			emit(o, "]\n", 2);
			in_section = true;
		}
		emit(o, "\t", 1);
		emit(o, e->key, strlen(e->key));
		if (e->value) {
			emit(o, " = ", 3);
			emit_quoted(o, e->value, true);
		}
		emit(o, "\n", 1);
		prev = e;
	}
	return 0;
}

int git_config_serialise(const struct git_config *c, const bool *skip, char **out, size_t *out_len)
{
	struct sink o = { 0 };
	int err;

	*out = NULL;
	*out_len = 0;
	err = write_config(c, skip, &o);
	if (err)
		return err;
	o.p = malloc(o.len + 1);
	if (!o.p)
		return -ENOMEM;
	o.len = 0;
	write_config(c, skip, &o);
	o.p[o.len] = '\0';
	*out = o.p;
	*out_len = o.len;
	return 0;
}
