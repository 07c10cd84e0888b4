// Package internal holds the ANTLR-generated SPARQL 1.1 lexer and parser
// (package parser, generated from Sparql.g4 by generate.sh). Nothing here
// is exported from the sparql package; the generated code is committed so
// that building needs no Node.
package internal

//go:generate ./generate.sh
