// Package planner turns the SPARQL algebra into a physical plan for the
// exploration engine: the start of each basic graph pattern, the order and
// direction of its steps, the execution mode of each step (in place or
// fork-join), where filters run, and how non-BGP operators join.
//
// In: *sparql.Query, graphstore statistics and the cluster shape. Out: a
// *Plan that states every choice, so exec never re-decides and EXPLAIN
// prints exactly what runs.
package planner
