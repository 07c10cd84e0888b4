// Package exec runs physical plans by graph exploration over the shards:
// batches of ID columns that carry the full binding history, steps run in
// place (one-sided fabric READs) or fork-join (rows and the rest of the plan
// shipped to the owning node), worker goroutines per node, deadlines and
// cancellation.
//
// In: a *planner.Plan and a store. Out: result rows as ID batches (decoded to
// terms only at the edge).
package exec
