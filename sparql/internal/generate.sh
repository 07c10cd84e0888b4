#!/bin/sh
# Regenerates the SPARQL lexer and parser from Sparql.g4 (run by `make
# generate` through go:generate). Needs Node 20 and npm.
set -eu
cd "$(dirname "$0")/parser"
rm -f ./*.go ./*.interp ./*.tokens
npx --yes antlr-ng@1.0.10 -Dlanguage=Go --generate-visitor=false --generate-listener=false \
	--package parser -o . ../Sparql.g4
rm -f ./*.interp ./*.tokens
# The Go target ends every rule with an unreachable "goto errorExit" so that
# the label is always used; go vet rejects unreachable code, so move that
# goto in front of the label behind an always-false condition.
for f in ./*.go; do
	sed -i -e '/goto errorExit \/\/ Trick to prevent compiler error/d' \
		-e 's/^errorExit:$/\tif false {\n\t\tgoto errorExit\n\t}\nerrorExit:/' "$f"
done
gofmt -w ./*.go
