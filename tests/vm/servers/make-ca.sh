#!/usr/bin/env bash
# make-ca.sh DIR NAME...: a throwaway test CA (DIR/ca.pem) and a server
# certificate for the given DNS names (DIR/server.pem, DIR/server.key).
set -euo pipefail
dir=$1
shift
san=$(printf 'DNS:%s,' "$@")
san=${san%,}
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bpfbox-test-ca \
	-keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=$1" \
	-keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
printf 'subjectAltName=%s\n' "$san" >"$dir/ext.cnf"
openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
	-CAcreateserial -days 2 -extfile "$dir/ext.cnf" -out "$dir/server.pem" 2>/dev/null
