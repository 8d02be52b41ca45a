// SPDX-License-Identifier: MIT
/*
 * SigV4 re-signing for masked AWS credentials (user/cred/cred_sigv4*.c): the
 * published aws-sig-v4-test-suite vectors (canonical request, string to sign,
 * signature), the rules srt adds (s3 paths as sent, the query's decoding),
 * the strict Authorization parser, srt's classification, and the re-signing
 * plan: a round trip from a sentinel signature to the real one, each denial.
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
#include <cmocka.h>

#include "cred/cred_sigv4.h"

#define SUITE_AKID "AKIDEXAMPLE"
#define SUITE_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SUITE_DATE "20150830T123600Z"
#define SUITE_SCOPE "20150830/us-east-1/service/aws4_request"
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define FORM_SHA "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e"
#define HOST "example.amazonaws.com"
#define SESSION_TOKEN "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"
#define STS_TOKEN                                                                          \
	"AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAe" \
	"MicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8ph" \
	"UZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT3" \
	"8xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQ" \
	"wj2ICCR/oLxBA=="
#define MAX_HDR 8

#define S(lit) ((struct cred_span){ (lit), sizeof(lit) - 1 })

static struct cred_span span(const char *s)
{
	return (struct cred_span){ s, s ? strlen(s) : 0 };
}

/* A request written as the suite writes it: "METHOD target" and "Name:value" lines. */
struct req_fx {
	struct cred_header hdr[MAX_HDR];
	struct cred_sigv4_request req;
};

static void build(struct req_fx *fx, const char *method, const char *path, const char *query,
		  const char *const *lines)
{
	memset(fx, 0, sizeof(*fx));
	fx->req.method = span(method);
	fx->req.path = span(path);
	fx->req.query = span(query);
	for (size_t i = 0; lines && lines[i]; i++) {
		const char *colon = strchr(lines[i], ':');

		assert_non_null(colon);
		assert_true(i < MAX_HDR);
		fx->hdr[i].name = (struct cred_span){ lines[i], (size_t)(colon - lines[i]) };
		fx->hdr[i].value = span(colon + 1);
		fx->req.nhdr++;
	}
	fx->req.hdr = fx->hdr;
}

struct vector {
	const char *name, *method, *path, *query;
	const char *lines[MAX_HDR];
	const char *payload_hash;
	const char *signed_list;
	const char *uri, *canon_query;	/* the canonical request's second and third lines */
	const char *canon_headers;	/* its header lines; NULL: host and x-amz-date */
	const char *sts_hash;		/* the string to sign's last line, where published */
	const char *signature;
};

#define BASE_LINES "Host:" HOST, "X-Amz-Date:" SUITE_DATE
#define BASE_CANON "host:" HOST "\nx-amz-date:" SUITE_DATE "\n"

/* From the suite (aws-c-auth's tests/aws-signing-test-suite/v4, normalize: true). */
static const struct vector vectors[] = {
	{ "get-vanilla", "GET", "/", NULL, { BASE_LINES }, EMPTY_SHA, "host;x-amz-date", "/", "",
	  NULL, "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
	  "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
	{ "get-vanilla-empty-query-key", "GET", "/", "Param1=value1", { BASE_LINES }, EMPTY_SHA,
	  "host;x-amz-date", "/", "Param1=value1", NULL, NULL,
	  "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb" },
	{ "get-vanilla-query-order-key-case", "GET", "/", "Param2=value2&Param1=value1",
	  { BASE_LINES }, EMPTY_SHA, "host;x-amz-date", "/", "Param1=value1&Param2=value2", NULL,
	  NULL, "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500" },
	{ "get-vanilla-query-order-encoded", "GET", "/", "Param-3=Value3&Param=Value2&%E1%88%B4=Value1",
	  { BASE_LINES }, EMPTY_SHA, "host;x-amz-date", "/",
	  "%E1%88%B4=Value1&Param=Value2&Param-3=Value3", NULL, NULL,
	  "371d3713e185cc334048618a97f809c9ffe339c62934c032af5a0e595648fcac" },
	{ "get-vanilla-query-unreserved", "GET", "/",
	  "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz="
	  "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	  { BASE_LINES }, EMPTY_SHA, "host;x-amz-date", "/",
	  "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz="
	  "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	  NULL, NULL, "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197" },
	{ "get-vanilla-utf8-query", "GET", "/", "\xe1\x88\xb4=bar", { BASE_LINES }, EMPTY_SHA,
	  "host;x-amz-date", "/", "%E1%88%B4=bar", NULL, NULL,
	  "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04" },
	{ "get-utf8", "GET", "/\xe1\x88\xb4", NULL, { BASE_LINES }, EMPTY_SHA, "host;x-amz-date",
	  "/%E1%88%B4", "", NULL, NULL,
	  "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85" },
	{ "get-unreserved", "GET", "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	  NULL, { BASE_LINES }, EMPTY_SHA, "host;x-amz-date",
	  "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", "", NULL, NULL,
	  "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f" },
	{ "get-space-normalized", "GET", "/example space/", NULL, { BASE_LINES }, EMPTY_SHA,
	  "host;x-amz-date", "/example%20space/", "", NULL, NULL,
	  "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741" },
	{ "get-relative-normalized", "GET", "/example/..", NULL, { BASE_LINES }, EMPTY_SHA,
	  "host;x-amz-date", "/", "", NULL, NULL,
	  "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
	{ "get-relative-relative-normalized", "GET", "/example1/example2/../..", NULL,
	  { BASE_LINES }, EMPTY_SHA, "host;x-amz-date", "/", "", NULL, NULL,
	  "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
	{ "get-slash-normalized", "GET", "//", NULL, { BASE_LINES }, EMPTY_SHA, "host;x-amz-date",
	  "/", "", NULL, NULL, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
	{ "get-slash-dot-slash-normalized", "GET", "/./", NULL, { BASE_LINES }, EMPTY_SHA,
	  "host;x-amz-date", "/", "", NULL, NULL,
	  "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
	{ "get-slash-pointless-dot-normalized", "GET", "/./example", NULL, { BASE_LINES },
	  EMPTY_SHA, "host;x-amz-date", "/example", "", NULL, NULL,
	  "ef75d96142cf21edca26f06005da7988e4f8dc83a165a80865db7089db637ec5" },
	{ "get-slashes-normalized", "GET", "//example//", NULL, { BASE_LINES }, EMPTY_SHA,
	  "host;x-amz-date", "/example/", "", NULL, NULL,
	  "9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84" },
	{ "get-header-key-duplicate", "GET", "/", NULL,
	  { "Host:" HOST, "My-Header1:value2", "My-Header1:value2", "My-Header1:value1",
	    "X-Amz-Date:" SUITE_DATE },
	  EMPTY_SHA, "host;my-header1;x-amz-date", "/", "",
	  "host:" HOST "\nmy-header1:value2,value2,value1\nx-amz-date:" SUITE_DATE "\n", NULL,
	  "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea" },
	{ "get-header-value-order", "GET", "/", NULL,
	  { "Host:" HOST, "My-Header1:value4", "My-Header1:value1", "My-Header1:value3",
	    "My-Header1:value2", "X-Amz-Date:" SUITE_DATE },
	  EMPTY_SHA, "host;my-header1;x-amz-date", "/", "",
	  "host:" HOST "\nmy-header1:value4,value1,value3,value2\nx-amz-date:" SUITE_DATE "\n",
	  NULL, "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01" },
	{ "get-header-value-trim", "GET", "/", NULL,
	  { "Host:" HOST, "My-Header1: value1", "My-Header2: \"a   b   c\"",
	    "X-Amz-Date:" SUITE_DATE },
	  EMPTY_SHA, "host;my-header1;my-header2;x-amz-date", "/", "",
	  "host:" HOST "\nmy-header1:value1\nmy-header2:\"a b c\"\nx-amz-date:" SUITE_DATE "\n",
	  NULL, "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736" },
	{ "get-vanilla-with-session-token", "GET", "/", NULL,
	  { "Host:" HOST, "X-Amz-Security-Token:" SESSION_TOKEN, "X-Amz-Date:" SUITE_DATE },
	  EMPTY_SHA, "host;x-amz-date;x-amz-security-token", "/", "",
	  BASE_CANON "x-amz-security-token:" SESSION_TOKEN "\n", NULL,
	  "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8" },
	{ "post-vanilla", "POST", "/", NULL, { BASE_LINES }, EMPTY_SHA, "host;x-amz-date", "/", "",
	  NULL, "553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87",
	  "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b" },
	{ "post-vanilla-query", "POST", "/", "Param1=value1", { BASE_LINES }, EMPTY_SHA,
	  "host;x-amz-date", "/", "Param1=value1", NULL, NULL,
	  "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11" },
	{ "post-header-key-sort", "POST", "/", NULL,
	  { "Host:" HOST, "My-Header1:value1", "X-Amz-Date:" SUITE_DATE }, EMPTY_SHA,
	  "host;my-header1;x-amz-date", "/", "",
	  "host:" HOST "\nmy-header1:value1\nx-amz-date:" SUITE_DATE "\n", NULL,
	  "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c" },
	{ "post-header-value-case", "POST", "/", NULL,
	  { "Host:" HOST, "My-Header1:VALUE1", "X-Amz-Date:" SUITE_DATE }, EMPTY_SHA,
	  "host;my-header1;x-amz-date", "/", "",
	  "host:" HOST "\nmy-header1:VALUE1\nx-amz-date:" SUITE_DATE "\n", NULL,
	  "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d" },
	{ "post-sts-header-before", "POST", "/", NULL,
	  { "Host:" HOST, "X-Amz-Security-Token:" STS_TOKEN, "X-Amz-Date:" SUITE_DATE },
	  EMPTY_SHA, "host;x-amz-date;x-amz-security-token", "/", "",
	  BASE_CANON "x-amz-security-token:" STS_TOKEN "\n", NULL,
	  "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead" },
	{ "post-sts-header-after", "POST", "/", NULL,
	  { "Host:" HOST, "X-Amz-Security-Token:" STS_TOKEN, "X-Amz-Date:" SUITE_DATE },
	  EMPTY_SHA, "host;x-amz-date", "/", "", NULL, NULL,
	  "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b" },
	{ "post-x-www-form-urlencoded", "POST", "/", NULL,
	  { "Content-Type:application/x-www-form-urlencoded", "Host:" HOST, "Content-Length:13",
	    "X-Amz-Date:" SUITE_DATE, "x-amz-content-sha256:" FORM_SHA },
	  FORM_SHA, "content-length;content-type;host;x-amz-content-sha256;x-amz-date", "/", "",
	  "content-length:13\ncontent-type:application/x-www-form-urlencoded\nhost:" HOST
	  "\nx-amz-content-sha256:" FORM_SHA "\nx-amz-date:" SUITE_DATE "\n",
	  "b1edd1d03544c25390e32085d55b57acc9a3961bb59415ff86c45c3d89d16cfb",
	  "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b" },
	{ "post-x-www-form-urlencoded-parameters", "POST", "/", NULL,
	  { "Content-Type:application/x-www-form-urlencoded; charset=utf-8", "Host:" HOST,
	    "Content-Length:13", "X-Amz-Date:" SUITE_DATE, "x-amz-content-sha256:" FORM_SHA },
	  FORM_SHA, "content-length;content-type;host;x-amz-content-sha256;x-amz-date", "/", "",
	  "content-length:13\ncontent-type:application/x-www-form-urlencoded; charset=utf-8\nhost:"
	  HOST "\nx-amz-content-sha256:" FORM_SHA "\nx-amz-date:" SUITE_DATE "\n",
	  "a89f1a5b53e37702ee6363ce1da3ce8f54386f3c8f352ae652153c2982a0bc4d",
	  "328d1b9eaadca9f5818ef05e8392801e091653bafec24fcab71e7344e7f51422" },
};

static void suite_authz(char *out, size_t cap, const char *akid, const char *list, const char *sig)
{
	snprintf(out, cap, "AWS4-HMAC-SHA256 Credential=%s/" SUITE_SCOPE ", SignedHeaders=%s, "
		 "Signature=%s", akid, list, sig);
}

static void check_vector(const struct vector *v)
{
	char authz[512], expect[4096], sts[512], hex[CRED_SIGV4_HEX + 1], again[512];
	struct cred_sigv4_auth auth;
	size_t creq_len, sts_len, len;
	struct req_fx fx;
	uint8_t sig[32];
	char *creq;

	print_message("vector %s\n", v->name);
	build(&fx, v->method, v->path, v->query, v->lines);
	suite_authz(authz, sizeof(authz), SUITE_AKID, v->signed_list, v->signature);
	assert_int_equal(cred_sigv4_parse_auth(authz, strlen(authz), &auth), 0);
	snprintf(expect, sizeof(expect), "%s\n%s\n%s\n%s\n%s\n%s", v->method, v->uri, v->canon_query,
		 v->canon_headers ? v->canon_headers : BASE_CANON, v->signed_list, v->payload_hash);
	assert_int_equal(cred_sigv4_canonical_request(&fx.req, &auth, span(v->payload_hash), &creq,
						      &creq_len, NULL), 0);
	assert_string_equal(creq, expect);
	assert_int_equal(creq_len, strlen(expect));
	assert_int_equal(cred_sigv4_string_to_sign(creq, creq_len, S(SUITE_DATE), &auth, sts,
						   sizeof(sts), &sts_len), 0);
	cred_sigv4_sha256_hex(creq, creq_len, hex);
	snprintf(expect, sizeof(expect), "AWS4-HMAC-SHA256\n" SUITE_DATE "\n" SUITE_SCOPE "\n%s",
		 v->sts_hash ? v->sts_hash : hex);
	assert_string_equal(sts, expect);
	free(creq);

	assert_int_equal(cred_sigv4_signature(&fx.req, &auth, S(SUITE_DATE), span(v->payload_hash),
					      S(SUITE_SECRET), sig, NULL), 0);
	assert_int_equal(cred_sigv4_format_auth(S(SUITE_AKID), &auth, sig, again, sizeof(again),
						&len), 0);
	assert_string_equal(again, authz);
	assert_int_equal(cred_sigv4_verify(&fx.req, &auth, S(SUITE_DATE), span(v->payload_hash),
					   S(SUITE_SECRET)), 0);
	assert_int_equal(cred_sigv4_verify(&fx.req, &auth, S(SUITE_DATE), span(v->payload_hash),
					   S("another-secret")), -EACCES);
}

static void test_suite_vectors(void **state)
{
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++)
		check_vector(&vectors[i]);
}

static void test_signing_key(void **state)
{
	struct cred_sigv4_auth auth;
	char authz[512], hex[65];
	uint8_t key[32];
	static const char hexd[] = "0123456789abcdef";

	suite_authz(authz, sizeof(authz), SUITE_AKID, "host", EMPTY_SHA);
	assert_int_equal(cred_sigv4_parse_auth(authz, strlen(authz), &auth), 0);
	assert_int_equal(cred_sigv4_signing_key(S(SUITE_SECRET), &auth, key), 0);
	for (size_t i = 0; i < 32; i++) {
		hex[2 * i] = hexd[key[i] >> 4];
		hex[2 * i + 1] = hexd[key[i] & 15];
	}
	hex[64] = '\0';
	assert_string_equal(hex, "938127b5336810ddb6a5d6af445fcac9e371f9ed418ed386b022aed82901be75");
}

/* The canonical request's URI and query lines for path?query under service. */
static void canon_lines(const char *service, const char *path, const char *query, char *uri,
			char *q)
{
	static const char *const lines[] = { "Host:" HOST, NULL };
	char authz[512], *creq, *nl1, *nl2, *nl3;
	struct cred_sigv4_auth auth;
	struct req_fx fx;
	size_t len;

	snprintf(authz, sizeof(authz), "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/%s/"
		 "aws4_request, SignedHeaders=host, Signature=%s", service, EMPTY_SHA);
	assert_int_equal(cred_sigv4_parse_auth(authz, strlen(authz), &auth), 0);
	build(&fx, "GET", path, query, lines);
	assert_int_equal(cred_sigv4_canonical_request(&fx.req, &auth, S(EMPTY_SHA), &creq, &len,
						      NULL), 0);
	nl1 = strchr(creq, '\n');
	nl2 = strchr(nl1 + 1, '\n');
	nl3 = strchr(nl2 + 1, '\n');
	memcpy(uri, nl1 + 1, (size_t)(nl2 - nl1 - 1));
	uri[nl2 - nl1 - 1] = '\0';
	memcpy(q, nl2 + 1, (size_t)(nl3 - nl2 - 1));
	q[nl3 - nl2 - 1] = '\0';
	free(creq);
}

static void test_paths(void **state)
{
	/* s3: the path as sent (the suite's unnormalized vectors' lines); others: resolved, encoded once more. */
	static const char *const cases[][3] = {
		{ "s3", "/example1/example2/../..", "/example1/example2/../.." },
		{ "s3", "/example/..", "/example/.." },
		{ "s3", "/./", "/./" },
		{ "s3", "//", "//" },
		{ "s3", "/./example", "/./example" },
		{ "s3", "//example//", "//example//" },
		{ "s3", "/bucket//key/./with%20space", "/bucket//key/./with%20space" },
		{ "s3", "", "/" },
		{ "execute-api", "/a%20b/c", "/a%2520b/c" },
		{ "service", "/example/..", "/" },
		{ "service", "//example//", "/example/" },
		{ "service", "/a/b/../../../c", "/c" },
		{ "service", "/a/./b/../c/", "/a/c/" },
		{ "service", "/model/foo:0/converse", "/model/foo%3A0/converse" },
		{ "service", "", "/" },
	};
	char uri[256], q[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		canon_lines(cases[i][0], cases[i][1], NULL, uri, q);
		assert_string_equal(uri, cases[i][2]);
	}
}

static void test_queries(void **state)
{
	static const char *const cases[][2] = {
		{ "b=2&a=2&a=1", "a=1&a=2&b=2" },
		{ "k=a+b", "k=a%2Bb" },
		{ "key", "key=" },
		{ "&&a=1&", "a=1" },
		{ "a=%zz&b=%4", "a=%25zz&b=%254" },
		{ "a=%C3%A9", "a=%C3%A9" },
		{ "a=%ff", "a=%25ff" },		/* not UTF-8: decodeURIComponent would throw */
		{ "a=b=c", "a=b%3Dc" },
		{ "a%20b=%2F", "a%20b=%2F" },
		{ "B=1&a=1", "B=1&a=1" },
	};
	char uri[256], q[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		canon_lines("service", "/", cases[i][0], uri, q);
		assert_string_equal(q, cases[i][1]);
	}
}

static void test_parse_auth(void **state)
{
	static const char ok[] = "AWS4-HMAC-SHA256 SignedHeaders=X-Amz-Date;Host;a,Signature="
				 "FFEEDDCCBBAA99887766554433221100ffeeddccbbaa99887766554433221100"
				 " ,  Credential=fake_id-1.x/20260715/eu-west-3/s3/aws4_request";
	struct cred_sigv4_auth a;

	assert_int_equal(cred_sigv4_parse_auth(ok, strlen(ok), &a), 0);
	assert_true(cred_sigv4_span_eq(a.akid, "fake_id-1.x"));
	assert_true(cred_sigv4_span_eq(a.date, "20260715"));
	assert_true(cred_sigv4_span_eq(a.region, "eu-west-3"));
	assert_true(cred_sigv4_span_eq(a.service, "s3"));
	assert_int_equal(a.nsigned, 3);
	assert_true(cred_sigv4_span_eq(a.signed_hdr[0], "a"));
	assert_true(cred_sigv4_span_eq(a.signed_hdr[1], "Host"));
	assert_true(cred_sigv4_span_eq(a.signed_hdr[2], "X-Amz-Date"));
	assert_int_equal(a.signature[0], 0xff);
	assert_int_equal(a.signature[31], 0x00);
}

#define GOOD_CRED "Credential=AKID/20150830/us-east-1/service/aws4_request"
#define GOOD_SH "SignedHeaders=host;x-amz-date"
#define GOOD_SIG "Signature=" EMPTY_SHA

static void test_parse_auth_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"Bearer abc",
		"AWS4-HMAC-SHA256",
		"AWS4-HMAC-SHA256 ",
		"AWS4-HMAC-SHA256X " GOOD_CRED ", " GOOD_SH ", " GOOD_SIG,
		"AWS4-HMAC-SHA256," GOOD_CRED ", " GOOD_SH ", " GOOD_SIG,
		"AWS4-ECDSA-P256-SHA256 " GOOD_CRED ", " GOOD_SH ", " GOOD_SIG,
		"AWS4-HMAC-SHA256 " GOOD_CRED ", " GOOD_SH,
		"AWS4-HMAC-SHA256 " GOOD_SH ", " GOOD_SIG,
		"AWS4-HMAC-SHA256 " GOOD_CRED ", " GOOD_SIG,
		"AWS4-HMAC-SHA256 " GOOD_CRED ", " GOOD_SH ", " GOOD_SIG ",",
		"AWS4-HMAC-SHA256 " GOOD_CRED ", " GOOD_SH ", " GOOD_SIG ", " GOOD_SIG,
		"AWS4-HMAC-SHA256 " GOOD_CRED ", " GOOD_CRED ", " GOOD_SH ", " GOOD_SIG,
		"AWS4-HMAC-SHA256 " GOOD_CRED ", " GOOD_SH ", " GOOD_SIG ", Extra=1",
		"AWS4-HMAC-SHA256 " GOOD_CRED " " GOOD_SH ", " GOOD_SIG,
		"AWS4-HMAC-SHA256 " GOOD_CRED ",, " GOOD_SH ", " GOOD_SIG,
		"AWS4-HMAC-SHA256 credential=AKID/20150830/us-east-1/service/aws4_request, " GOOD_SH
		", " GOOD_SIG,
		/* The scope: 4 parts, a bad terminator, a bad date, empty parts, bad key id bytes. */
		"AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/aws4_request, " GOOD_SH ", "
		GOOD_SIG,
		"AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/service/aws4_requests, " GOOD_SH
		", " GOOD_SIG,
		"AWS4-HMAC-SHA256 Credential=AKID/2015083/us-east-1/service/aws4_request, " GOOD_SH
		", " GOOD_SIG,
		"AWS4-HMAC-SHA256 Credential=AKID/2015O830/us-east-1/service/aws4_request, " GOOD_SH
		", " GOOD_SIG,
		"AWS4-HMAC-SHA256 Credential=/20150830/us-east-1/service/aws4_request, " GOOD_SH ", "
		GOOD_SIG,
		"AWS4-HMAC-SHA256 Credential=AKID/20150830//service/aws4_request, " GOOD_SH ", "
		GOOD_SIG,
		"AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1//aws4_request, " GOOD_SH ", "
		GOOD_SIG,
		"AWS4-HMAC-SHA256 Credential=AK=ID/20150830/us-east-1/service/aws4_request, " GOOD_SH
		", " GOOD_SIG,
		"AWS4-HMAC-SHA256 Credential=AKID/20150830/us east/service/aws4_request, " GOOD_SH
		", " GOOD_SIG,
		"AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/service/aws4_request/x, "
		GOOD_SH ", " GOOD_SIG,
		/* Signed headers: empty, an empty name, a repeat in another case, a bad byte. */
		"AWS4-HMAC-SHA256 " GOOD_CRED ", SignedHeaders=, " GOOD_SIG,
		"AWS4-HMAC-SHA256 " GOOD_CRED ", SignedHeaders=host;;x-amz-date, " GOOD_SIG,
		"AWS4-HMAC-SHA256 " GOOD_CRED ", SignedHeaders=host;x-amz-date;, " GOOD_SIG,
		"AWS4-HMAC-SHA256 " GOOD_CRED ", SignedHeaders=host;HOST, " GOOD_SIG,
		"AWS4-HMAC-SHA256 " GOOD_CRED ", SignedHeaders=ho:st, " GOOD_SIG,
		/* The signature: short, long, not hex, empty. */
		"AWS4-HMAC-SHA256 " GOOD_CRED ", " GOOD_SH ", Signature=ff00",
		"AWS4-HMAC-SHA256 " GOOD_CRED ", " GOOD_SH ", " GOOD_SIG "0",
		"AWS4-HMAC-SHA256 " GOOD_CRED ", " GOOD_SH ", Signature="
		"g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"AWS4-HMAC-SHA256 " GOOD_CRED ", " GOOD_SH ", Signature=",
	};
	static const char good[] = "AWS4-HMAC-SHA256 " GOOD_CRED "," GOOD_SH "," GOOD_SIG;
	struct cred_sigv4_auth a;
	char *big;

	assert_int_equal(cred_sigv4_parse_auth(good, strlen(good), &a), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("malformed %zu: %s\n", i, bad[i]);
		assert_int_equal(cred_sigv4_parse_auth(bad[i], strlen(bad[i]), &a), -EINVAL);
	}
	/* Over the length limit, and 65 signed names. */
	big = malloc(CRED_SIGV4_AUTH_MAX + 64);
	assert_non_null(big);
	snprintf(big, CRED_SIGV4_AUTH_MAX + 64, "AWS4-HMAC-SHA256 " GOOD_CRED ", " GOOD_SIG
		 ", SignedHeaders=host");
	while (strlen(big) <= CRED_SIGV4_AUTH_MAX)
		strcat(big, ";a");
	assert_int_equal(cred_sigv4_parse_auth(big, strlen(big), &a), -EINVAL);
	snprintf(big, CRED_SIGV4_AUTH_MAX + 64, "AWS4-HMAC-SHA256 " GOOD_CRED ", " GOOD_SIG
		 ", SignedHeaders=h0");
	for (int i = 1; i <= CRED_SIGV4_MAX_SIGNED; i++)
		sprintf(big + strlen(big), ";h%d", i);
	assert_int_equal(cred_sigv4_parse_auth(big, strlen(big), &a), -EINVAL);
	free(big);
}


static void classify(const char *query, const char *const *lines, enum cred_sigv4_kind kind,
		     const char *akid)
{
	struct cred_sigv4_class cls;
	struct req_fx fx;

	build(&fx, "GET", "/key", query, lines);
	cred_sigv4_classify(&fx.req, &cls);
	assert_int_equal(cls.kind, kind);
	assert_string_equal(cls.akid, akid);
	assert_int_equal(cls.akid_len, strlen(akid));
}

#define FAKE "fake_value_e5b0c442-98fc-1c14"
#define HDR_AUTH "Authorization:AWS4-HMAC-SHA256 Credential=" FAKE "/20150830/us-east-1/s3/" \
		 "aws4_request, SignedHeaders=host;x-amz-date, Signature=ff00"
#define V4A_AUTH "Authorization:AWS4-ECDSA-P256-SHA256 Credential=" FAKE "/20150830/s3/" \
		 "aws4_request, SignedHeaders=host;x-amz-date;x-amz-region-set, Signature=ff00"
#define PRESIGNED(algo, akid) "X-Amz-Algorithm=" algo "&X-Amz-Credential=" akid \
		 "%2F20150830%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20150830T123600Z" \
		 "&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=ff00"

/* srt's detectSigv4 cases. */
static void test_classify(void **state)
{
	static const char *const plain[] = { HDR_AUTH, NULL };
	static const char *const literal[] = { HDR_AUTH, "x-amz-content-sha256:" EMPTY_SHA, NULL };
	static const char *const v4a[] = { V4A_AUTH, "X-Amz-Region-Set:*", NULL };
	static const char *const markers[] = { "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
					       "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
					       "STREAMING-UNSIGNED-PAYLOAD-TRAILER" };
	static const char *const junk[] = { "Basic dXNlcjpwYXNz", "Bearer abc",
					    "AWS4-HMAC-SHA256 garbage",
					    "AWS4-ECDSA-P256-SHA256 garbage" };
	char line[128];

	classify(NULL, plain, CRED_SIGV4_PLAIN, FAKE);
	classify(NULL, literal, CRED_SIGV4_PLAIN, FAKE);
	for (size_t i = 0; i < 3; i++) {
		const char *const streaming[] = { HDR_AUTH, line, "Content-Encoding:aws-chunked",
						  NULL };

		snprintf(line, sizeof(line), "X-Amz-Content-Sha256:%s", markers[i]);
		classify(NULL, streaming, CRED_SIGV4_STREAMING, FAKE);
	}
	classify(PRESIGNED("AWS4-HMAC-SHA256", FAKE), NULL, CRED_SIGV4_PRESIGNED, FAKE);
	classify(PRESIGNED("AWS4-ECDSA-P256-SHA256", FAKE) "&X-Amz-Region-Set=%2A", NULL,
		 CRED_SIGV4_PRESIGNED, FAKE);
	classify(NULL, v4a, CRED_SIGV4_SIGV4A, FAKE);
	/* Not SigV4. */
	classify(NULL, (const char *const[]){ "Authorization:Bearer abc", NULL },
		 CRED_SIGV4_NOT_SIGNED, "");
	classify("a=1", NULL, CRED_SIGV4_NOT_SIGNED, "");
	classify("X-Amz-Signature=ff00", NULL, CRED_SIGV4_NOT_SIGNED, "");
	classify("X-Amz-Algorithm=AWS1-HMAC-SHA1&X-Amz-Signature=ff00&X-Amz-Credential=" FAKE
		 "%2Fx", NULL, CRED_SIGV4_NOT_SIGNED, "");
	classify("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=ff00&X-Amz-Credential=",
		 NULL, CRED_SIGV4_NOT_SIGNED, "");
	/* A header that does not classify does not hide the query; one that does wins. */
	for (size_t i = 0; i < 4; i++) {
		const char *const lines[] = { line, NULL };

		snprintf(line, sizeof(line), "Authorization:%s", junk[i]);
		classify(PRESIGNED("AWS4-HMAC-SHA256", FAKE), lines, CRED_SIGV4_PRESIGNED, FAKE);
	}
	classify(PRESIGNED("AWS4-HMAC-SHA256", "AKIDQUERYEXAMPLE"), plain, CRED_SIGV4_PLAIN, FAKE);
	/* The query's key id decoded; the header's read up to its '/'. */
	classify(PRESIGNED("AWS4-HMAC-SHA256", "a%2Bb+c"), NULL, CRED_SIGV4_PRESIGNED, "a+b c");
}

#define SENTINEL_SECRET "fake_value_secret_0123456789abcdefghij"

static const struct cred_sigv4_pair suite_pair = {
	.sentinel_akid = S(FAKE),
	.real_akid = S(SUITE_AKID),
	.real_secret = S(SUITE_SECRET),
};

/* What the command does: sign req with the sentinel pair; the result is its Authorization line. */
static void client_sign(const struct req_fx *fx, const char *list, const char *payload_hash,
			const char *akid, const char *secret, char *line, size_t cap)
{
	char authz[512];
	struct cred_sigv4_auth auth;
	uint8_t sig[32];
	size_t len;

	suite_authz(authz, sizeof(authz), akid, list, EMPTY_SHA);
	assert_int_equal(cred_sigv4_parse_auth(authz, strlen(authz), &auth), 0);
	assert_int_equal(cred_sigv4_signature(&fx->req, &auth, S(SUITE_DATE), span(payload_hash),
					      span(secret), sig, NULL), 0);
	memcpy(line, "Authorization:", 14);
	assert_int_equal(cred_sigv4_format_auth(span(akid), &auth, sig, line + 14, cap - 14, &len),
			 0);
}

/* lines signed by the command with list; plan, then re-sign fwd_lines (lines if NULL). */
static void round_trip(const char *method, const char *path, const char *const *lines,
		       const char *list, const char *client_hash, const struct cred_sigv4_pair *pair,
		       const char *const *fwd_lines, const char *fwd_hash, char *out, size_t cap)
{
	const char *with_auth[MAX_HDR + 1] = { 0 };
	struct cred_sigv4_plan plan;
	struct cred_sigv4_auth client;
	struct req_fx fx, fwd;
	char line[512];
	size_t n = 0, len;

	build(&fx, method, path, NULL, lines);
	client_sign(&fx, list, client_hash, FAKE, SENTINEL_SECRET, line, sizeof(line));
	/* The client's signature is the sentinel secret's, not the real one's. */
	assert_int_equal(cred_sigv4_parse_auth(line + 14, strlen(line + 14), &client), 0);
	assert_int_equal(cred_sigv4_verify(&fx.req, &client, S(SUITE_DATE), span(client_hash),
					   S(SENTINEL_SECRET)), 0);
	assert_int_equal(cred_sigv4_verify(&fx.req, &client, S(SUITE_DATE), span(client_hash),
					   pair->real_secret), -EACCES);
	for (; lines[n]; n++)
		with_auth[n] = lines[n];
	with_auth[n] = line;
	build(&fx, method, path, NULL, with_auth);
	assert_int_equal(cred_sigv4_plan(&fx.req, pair, 1, NULL, &plan), 0);
	assert_int_equal(plan.action, CRED_SIGV4_RESIGN);
	assert_int_equal(plan.reason, CRED_SIGV4_OK);
	assert_int_equal(plan.pair, 0);
	assert_string_equal(plan.amz_date, SUITE_DATE);
	build(&fwd, method, path, NULL, fwd_lines ? fwd_lines : lines);
	assert_int_equal(cred_sigv4_resign(&plan, &fwd.req, pair, span(fwd_hash), out, cap, &len),
			 0);
	assert_int_equal(len, strlen(out));
}

/* Signed with the sentinel, re-signed: the suite's signature with the real pair. */
static void test_round_trip_vanilla(void **state)
{
	static const char *const lines[] = { BASE_LINES, NULL };
	char out[512], expect[512];
	struct cred_sigv4_pair pairs[2] = { suite_pair, suite_pair };

	round_trip("GET", "/", lines, "host;x-amz-date", EMPTY_SHA, &suite_pair, NULL, EMPTY_SHA,
		   out, sizeof(out));
	suite_authz(expect, sizeof(expect), SUITE_AKID, "host;x-amz-date",
		    "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
	assert_string_equal(out, expect);
	assert_null(strstr(out, FAKE));

	/* The matching pair among several. */
	pairs[0].sentinel_akid = S("fake_value_other");
	round_trip("GET", "/", lines, "host;x-amz-date", EMPTY_SHA, &pairs[1], NULL, EMPTY_SHA,
		   out, sizeof(out));
	assert_string_equal(out, expect);
}

/* The pair's session token is set and signed though the command did not sign one. */
static void test_round_trip_session_token(void **state)
{
	static const char *const lines[] = { BASE_LINES, NULL };
	static const char *const fwd[] = { "Host:" HOST, "X-Amz-Security-Token:" SESSION_TOKEN,
					   "X-Amz-Date:" SUITE_DATE, NULL };
	struct cred_sigv4_pair pair = suite_pair;
	char out[512], expect[512];

	pair.real_token = S(SESSION_TOKEN);
	round_trip("GET", "/", lines, "host;x-amz-date", EMPTY_SHA, &pair, fwd, EMPTY_SHA, out,
		   sizeof(out));
	suite_authz(expect, sizeof(expect), SUITE_AKID, "host;x-amz-date;x-amz-security-token",
		    "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8");
	assert_string_equal(out, expect);
}

/* A literal body hash: the caller's hash of the body as forwarded is signed. */
static void test_round_trip_literal_body(void **state)
{
	static const char *const lines[] = {
		"Content-Type:application/x-www-form-urlencoded", "Host:" HOST, "Content-Length:13",
		"X-Amz-Date:" SUITE_DATE, "x-amz-content-sha256:" FORM_SHA, NULL
	};
	static const char list[] = "content-length;content-type;host;x-amz-content-sha256;x-amz-date";
	char out[512], expect[512], hash[CRED_SIGV4_HEX + 1];

	cred_sigv4_sha256_hex("Param1=value1", 13, hash);
	assert_string_equal(hash, FORM_SHA);
	round_trip("POST", "/", lines, list, FORM_SHA, &suite_pair, NULL, hash, out, sizeof(out));
	suite_authz(expect, sizeof(expect), SUITE_AKID, list,
		    "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b");
	assert_string_equal(out, expect);
}

/* UNSIGNED-PAYLOAD: signed as the marker, no body hash; equal to a direct real signature. */
static void test_round_trip_unsigned_payload(void **state)
{
	static const char *const lines[] = { "Host:bucket.s3.amazonaws.com",
					     "X-Amz-Date:" SUITE_DATE,
					     "X-Amz-Content-Sha256:UNSIGNED-PAYLOAD", NULL };
	static const char list[] = "host;x-amz-content-sha256;x-amz-date";
	struct cred_sigv4_auth auth;
	char out[512], direct[512];
	struct req_fx fx;

	round_trip("PUT", "/a%20key", lines, list, "UNSIGNED-PAYLOAD", &suite_pair, NULL, NULL, out,
		   sizeof(out));
	build(&fx, "PUT", "/a%20key", NULL, lines);
	client_sign(&fx, list, "UNSIGNED-PAYLOAD", SUITE_AKID, SUITE_SECRET, direct,
		    sizeof(direct));
	assert_string_equal(out, direct + 14);
	assert_int_equal(cred_sigv4_parse_auth(out, strlen(out), &auth), 0);
	assert_int_equal(cred_sigv4_verify(&fx.req, &auth, S(SUITE_DATE), S("UNSIGNED-PAYLOAD"),
					   S(SUITE_SECRET)), 0);
}

static void plan_of(const char *query, const char *const *lines,
		    const struct cred_sigv4_policy *policy, struct cred_sigv4_plan *plan)
{
	struct req_fx fx;

	build(&fx, "PUT", "/bucket/key", query, lines);
	assert_int_equal(cred_sigv4_plan(&fx.req, &suite_pair, 1, policy, plan), 0);
}

static void expect_denied(const struct cred_sigv4_plan *plan, enum cred_sigv4_reason reason,
			  const char *needle)
{
	char msg[512];

	assert_int_equal(plan->action, CRED_SIGV4_DENY);
	assert_int_equal(plan->reason, reason);
	assert_true(cred_sigv4_deny_message(plan, msg, sizeof(msg)) < sizeof(msg));
	print_message("%s\n", msg);
	assert_non_null(strstr(msg, needle));
}

/* Streaming, presigned, SigV4a: denied by default, each naming its setting; passed if set. */
static void test_deny_shapes(void **state)
{
	static const char *const streaming[] = {
		HDR_AUTH, "X-Amz-Date:" SUITE_DATE,
		"X-Amz-Content-Sha256:STREAMING-AWS4-HMAC-SHA256-PAYLOAD", NULL
	};
	static const char *const v4a[] = { V4A_AUTH, "X-Amz-Date:" SUITE_DATE,
					   "X-Amz-Region-Set:*", NULL };
	static const char *const basic[] = { "Authorization:Basic dXNlcjpwYXNz", NULL };
	const struct cred_sigv4_policy pass = { CRED_SIGV4_POLICY_PASSTHROUGH,
						CRED_SIGV4_POLICY_PASSTHROUGH,
						CRED_SIGV4_POLICY_PASSTHROUGH };
	struct cred_sigv4_plan plan;

	plan_of(NULL, streaming, NULL, &plan);
	expect_denied(&plan, CRED_SIGV4_DENY_STREAMING, "credentials.sigv4.streaming");
	plan_of(PRESIGNED("AWS4-HMAC-SHA256", FAKE), NULL, NULL, &plan);
	expect_denied(&plan, CRED_SIGV4_DENY_PRESIGNED, "credentials.sigv4.presigned");
	plan_of(PRESIGNED("AWS4-HMAC-SHA256", FAKE), basic, NULL, &plan);
	expect_denied(&plan, CRED_SIGV4_DENY_PRESIGNED, "AWS SigV4 presigned request");
	plan_of(NULL, v4a, NULL, &plan);
	expect_denied(&plan, CRED_SIGV4_DENY_SIGV4A, "credentials.sigv4.sigv4a");

	plan_of(NULL, streaming, &pass, &plan);
	assert_int_equal(plan.action, CRED_SIGV4_PASSTHROUGH);
	assert_int_equal(plan.kind, CRED_SIGV4_STREAMING);
	plan_of(PRESIGNED("AWS4-HMAC-SHA256", FAKE), NULL, &pass, &plan);
	assert_int_equal(plan.action, CRED_SIGV4_PASSTHROUGH);
	plan_of(NULL, v4a, &pass, &plan);
	assert_int_equal(plan.action, CRED_SIGV4_PASSTHROUGH);
	/* One shape passed through leaves the others denied. */
	plan_of(NULL, streaming, &(struct cred_sigv4_policy){ .sigv4a = CRED_SIGV4_POLICY_PASSTHROUGH },
		&plan);
	expect_denied(&plan, CRED_SIGV4_DENY_STREAMING, "streaming");
}

/* A key id that is no pair's sentinel, a real one included, is never rewritten nor denied. */
static void test_not_ours(void **state)
{
	static const char *const other[] = {
		"Authorization:AWS4-HMAC-SHA256 Credential=AKIDUNRELATEDEXAMPLE/20150830/us-east-1/"
		"s3/aws4_request, SignedHeaders=host;x-amz-date;x-missing, Signature=ff00", NULL
	};
	static const char *const prefix[] = {
		"Authorization:AWS4-HMAC-SHA256 Credential=" FAKE "x/20150830/us-east-1/s3/"
		"aws4_request, SignedHeaders=host, Signature=ff00", NULL
	};
	static const char *const streaming[] = {
		"Authorization:AWS4-HMAC-SHA256 Credential=AKIDUNRELATEDEXAMPLE/20150830/us-east-1/"
		"s3/aws4_request, SignedHeaders=host, Signature=ff00",
		"X-Amz-Content-Sha256:STREAMING-AWS4-HMAC-SHA256-PAYLOAD", NULL
	};
	static const char *const bearer[] = { "Authorization:Bearer " FAKE, NULL };
	struct cred_sigv4_plan plan;
	struct req_fx fx;

	plan_of(NULL, other, NULL, &plan);
	assert_int_equal(plan.action, CRED_SIGV4_NOT_OURS);
	plan_of(NULL, prefix, NULL, &plan);
	assert_int_equal(plan.action, CRED_SIGV4_NOT_OURS);
	plan_of(NULL, streaming, NULL, &plan);
	assert_int_equal(plan.action, CRED_SIGV4_NOT_OURS);
	plan_of(PRESIGNED("AWS4-HMAC-SHA256", "AKIDUNRELATEDEXAMPLE"), NULL, NULL, &plan);
	assert_int_equal(plan.action, CRED_SIGV4_NOT_OURS);
	plan_of(NULL, bearer, NULL, &plan);
	assert_int_equal(plan.action, CRED_SIGV4_NOT_OURS);
	assert_int_equal(plan.kind, CRED_SIGV4_NOT_SIGNED);
	/* A key id too long to be a sentinel: classified, never matched. */
	{
		char line[400];
		const char *const lines[] = { line, NULL };
		struct cred_sigv4_class cls;

		snprintf(line, sizeof(line), "Authorization:AWS4-HMAC-SHA256 Credential=%0*d/20150830/"
			 "us-east-1/s3/aws4_request, SignedHeaders=host, Signature=ff00",
			 CRED_SIGV4_AKID_MAX + 1, 0);
		build(&fx, "GET", "/", NULL, lines);
		cred_sigv4_classify(&fx.req, &cls);
		assert_int_equal(cls.kind, CRED_SIGV4_PLAIN);
		assert_int_equal(cls.akid_len, 0);
		assert_int_equal(cred_sigv4_plan(&fx.req, &suite_pair, 1, NULL, &plan), 0);
		assert_int_equal(plan.action, CRED_SIGV4_NOT_OURS);
	}
	/* No pair for this destination. */
	build(&fx, "GET", "/", NULL, other);
	assert_int_equal(cred_sigv4_plan(&fx.req, NULL, 0, NULL, &plan), 0);
	assert_int_equal(plan.action, CRED_SIGV4_NOT_OURS);
	assert_int_equal(cred_sigv4_plan(&fx.req, NULL, 1, NULL, &plan), -EINVAL);
	assert_int_equal(cred_sigv4_plan(NULL, &suite_pair, 1, NULL, &plan), -EINVAL);
}

#define SENT_AUTH(list, sig) "Authorization:AWS4-HMAC-SHA256 Credential=" FAKE \
	"/20150830/us-east-1/s3/aws4_request, SignedHeaders=" list ", Signature=" sig

/* Ours but not re-signable: a missing signed header, no date, a malformed or repeated header. */
static void test_deny_unusable(void **state)
{
	static const char *const missing[] = {
		SENT_AUTH("host;x-amz-date;X-Custom", EMPTY_SHA), "X-Amz-Date:" SUITE_DATE, NULL
	};
	static const char *const no_date[] = { SENT_AUTH("host", EMPTY_SHA), NULL };
	static const char *const two_dates[] = { SENT_AUTH("host", EMPTY_SHA),
						 "X-Amz-Date:" SUITE_DATE, "X-Amz-Date:" SUITE_DATE,
						 NULL };
	static const char *const short_sig[] = { SENT_AUTH("host;x-amz-date", "ff00"),
						 "X-Amz-Date:" SUITE_DATE, NULL };
	static const char *const two_auth[] = { SENT_AUTH("host", EMPTY_SHA),
						SENT_AUTH("host", EMPTY_SHA),
						"X-Amz-Date:" SUITE_DATE, NULL };
	static const char *const two_sha[] = { SENT_AUTH("host", EMPTY_SHA), "X-Amz-Date:" SUITE_DATE,
					       "x-amz-content-sha256:" EMPTY_SHA,
					       "x-amz-content-sha256:UNSIGNED-PAYLOAD", NULL };
	static const char *const token[] = { SENT_AUTH("host;x-amz-date;x-amz-security-token",
						       EMPTY_SHA), "X-Amz-Date:" SUITE_DATE, NULL };
	/* A signature the real key would make for no particular destination. */
	static const char *const no_host[] = { SENT_AUTH("x-amz-date", EMPTY_SHA), "X-Amz-Date:" SUITE_DATE, NULL };
	struct cred_sigv4_pair pair = suite_pair;
	struct cred_sigv4_plan plan;
	struct req_fx fx;

	plan_of(NULL, missing, NULL, &plan);
	expect_denied(&plan, CRED_SIGV4_DENY_MISSING_HEADER, "signed header \"x-custom\" is missing");
	plan_of(NULL, no_host, NULL, &plan);
	expect_denied(&plan, CRED_SIGV4_DENY_HOST_UNSIGNED, "does not sign the host header");
	plan_of(NULL, no_date, NULL, &plan);
	expect_denied(&plan, CRED_SIGV4_DENY_NO_DATE, "no x-amz-date");
	plan_of(NULL, two_dates, NULL, &plan);
	expect_denied(&plan, CRED_SIGV4_DENY_NO_DATE, "no x-amz-date");
	plan_of(NULL, short_sig, NULL, &plan);
	expect_denied(&plan, CRED_SIGV4_DENY_MALFORMED, "Authorization header is malformed");
	plan_of(NULL, two_auth, NULL, &plan);
	expect_denied(&plan, CRED_SIGV4_DENY_MALFORMED, "malformed");
	plan_of(NULL, two_sha, NULL, &plan);
	expect_denied(&plan, CRED_SIGV4_DENY_MALFORMED, "malformed");
	/* A token the command signed but did not send: missing, unless the pair brings one. */
	plan_of(NULL, token, NULL, &plan);
	expect_denied(&plan, CRED_SIGV4_DENY_MISSING_HEADER, "x-amz-security-token");
	pair.real_token = S(SESSION_TOKEN);
	build(&fx, "GET", "/", NULL, token);
	assert_int_equal(cred_sigv4_plan(&fx.req, &pair, 1, NULL, &plan), 0);
	assert_int_equal(plan.action, CRED_SIGV4_RESIGN);
	assert_true(plan.add_token);
	/* The caller's own denial: the body over the buffering limit. */
	memset(&plan, 0, sizeof(plan));
	plan.reason = CRED_SIGV4_DENY_BODY_TOO_LARGE;
	expect_denied(&(struct cred_sigv4_plan){ .action = CRED_SIGV4_DENY,
						 .reason = CRED_SIGV4_DENY_BODY_TOO_LARGE },
		      CRED_SIGV4_DENY_BODY_TOO_LARGE, "exceeds the 67108864-byte buffering limit");
}

static void test_resign_errors(void **state)
{
	static const char *const lines[] = { SENT_AUTH("host;x-amz-date", EMPTY_SHA), "Host:" HOST,
					     "X-Amz-Date:" SUITE_DATE, NULL };
	static const char *const no_date[] = { "Host:" HOST, NULL };
	static const char *const other_sha[] = { "Host:" HOST, "X-Amz-Date:" SUITE_DATE,
						 "x-amz-content-sha256:" FORM_SHA, NULL };
	struct cred_sigv4_pair other = suite_pair;
	struct cred_sigv4_plan plan, passed;
	struct req_fx fx, fwd;
	char out[512];
	size_t len;

	build(&fx, "GET", "/", NULL, lines);
	assert_int_equal(cred_sigv4_plan(&fx.req, &suite_pair, 1, NULL, &plan), 0);
	assert_int_equal(plan.action, CRED_SIGV4_RESIGN);
	assert_false(plan.unsigned_payload);
	assert_int_equal(cred_sigv4_resign(&plan, &fx.req, &suite_pair, S(EMPTY_SHA), out,
					   sizeof(out), &len), 0);
	/* The plan was made for another pair's sentinel. */
	other.sentinel_akid = S("fake_value_other");
	assert_int_equal(cred_sigv4_resign(&plan, &fx.req, &other, S(EMPTY_SHA), out, sizeof(out),
					   &len), -EPERM);
	/* A signed header gone from the forwarded request. */
	build(&fwd, "GET", "/", NULL, no_date);
	assert_int_equal(cred_sigv4_resign(&plan, &fwd.req, &suite_pair, S(EMPTY_SHA), out,
					   sizeof(out), &len), -ENOENT);
	/* A payload hash that is not 64 lower-case hex digits, or not the one the field says. */
	assert_int_equal(cred_sigv4_resign(&plan, &fx.req, &suite_pair, S("E3B0"), out,
					   sizeof(out), &len), -EINVAL);
	assert_int_equal(cred_sigv4_resign(&plan, &fx.req, &suite_pair, S("UNSIGNED-PAYLOAD"), out,
					   sizeof(out), &len), -EINVAL);
	build(&fwd, "GET", "/", NULL, other_sha);
	assert_int_equal(cred_sigv4_resign(&plan, &fwd.req, &suite_pair, S(EMPTY_SHA), out,
					   sizeof(out), &len), -EINVAL);
	/* No room, and a plan that is not a re-signing. */
	assert_int_equal(cred_sigv4_resign(&plan, &fx.req, &suite_pair, S(EMPTY_SHA), out, 40,
					   &len), -ENOSPC);
	passed = plan;
	passed.action = CRED_SIGV4_PASSTHROUGH;
	assert_int_equal(cred_sigv4_resign(&passed, &fx.req, &suite_pair, S(EMPTY_SHA), out,
					   sizeof(out), &len), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_suite_vectors),
		cmocka_unit_test(test_signing_key),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_queries),
		cmocka_unit_test(test_parse_auth),
		cmocka_unit_test(test_parse_auth_malformed),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_round_trip_vanilla),
		cmocka_unit_test(test_round_trip_session_token),
		cmocka_unit_test(test_round_trip_literal_body),
		cmocka_unit_test(test_round_trip_unsigned_payload),
		cmocka_unit_test(test_deny_shapes),
		cmocka_unit_test(test_not_ours),
		cmocka_unit_test(test_deny_unusable),
		cmocka_unit_test(test_resign_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
