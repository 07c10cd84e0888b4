package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/wukongd/wukongd/sparql"
)

func init() {
	register(&command{name: "parse", summary: "check a SPARQL 1.1 query or update and print it", run: runParse})
}

func runParse(args []string) error {
	fs := newFlagSet("parse", "[--algebra] FILE|-", `
Parses a SPARQL 1.1 query or update request from FILE (or standard input
for "-") and prints it back as SPARQL, normalised by the parser: IRIs
resolved, abbreviations expanded, blank nodes as labels. With --algebra it
prints the algebra tree instead. A syntax error is printed as FILE:LINE:COL
and the exit status is non-zero.`)
	algebra := fs.Bool("algebra", false, "print the algebra tree instead of SPARQL")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("expected one FILE argument (or - for standard input)")
	}
	name := fs.Arg(0)
	var text []byte
	var err error
	if name == "-" {
		text, err = io.ReadAll(os.Stdin)
		name = "<stdin>"
	} else {
		text, err = os.ReadFile(name)
	}
	if err != nil {
		return fmt.Errorf("cannot read the query: %w", err)
	}
	q, u, err := sparql.Parse(string(text))
	if err != nil {
		var se *sparql.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%s:%d:%d: %s", name, se.Line, se.Col, se.Msg)
		}
		return err
	}
	switch {
	case q != nil && *algebra:
		fmt.Print(sparql.FormatAlgebra(q))
	case q != nil:
		fmt.Println(q.String())
	case *algebra:
		fmt.Print(sparql.FormatUpdateAlgebra(u))
	default:
		fmt.Println(u.String())
	}
	return nil
}
