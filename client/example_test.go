package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/wukongd/wukongd/client"
)

// A stand-in for a SPARQL endpoint such as `wukongd serve`.
func fakeEndpoint() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/sparql-results+json")
		fmt.Fprint(w, `{"head":{"vars":["student","name"]},"results":{"bindings":[
			{"student":{"type":"uri","value":"http://www.Department0.University0.edu/GraduateStudent1"},
			 "name":{"type":"literal","value":"GraduateStudent1"}},
			{"student":{"type":"uri","value":"http://www.Department0.University0.edu/GraduateStudent2"}}]}}`)
	}))
}

func ExampleClient_Select() {
	srv := fakeEndpoint()
	defer srv.Close()

	c := client.New(srv.URL + "/sparql") // e.g. http://127.0.0.1:8080/sparql
	ctx := context.Background()
	rows, err := c.Select(ctx, `
		PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>
		SELECT ?student ?name WHERE {
			?student a ub:GraduateStudent .
			OPTIONAL { ?student ub:name ?name }
		}`, client.WithTimeout(10e9))
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	fmt.Println(rows.Vars())
	for rows.Next() {
		row := rows.Row()
		name := "(no name)"
		if !row[1].IsZero() {
			name = row[1].Value
		}
		fmt.Println(row[0].Value, name)
	}
	if err := rows.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// [student name]
	// http://www.Department0.University0.edu/GraduateStudent1 GraduateStudent1
	// http://www.Department0.University0.edu/GraduateStudent2 (no name)
}
