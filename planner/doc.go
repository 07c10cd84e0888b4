// Package planner turns the SPARQL algebra into a physical plan for the
// exploration engine (DESIGN.md §5).
//
// In: a *sparql.Query, a Catalog (term → ID, from the dictionary), Stats
// (per predicate triples and distinct subjects/objects, per class
// instances, the shard count) and Options (forced Mode, ForkThreshold,
// fabric Cost). Out: a *Plan: a tree of Explore / Project / Distinct /
// OrderBy / Slice nodes that states every physical choice, so exec never
// re-decides and EXPLAIN prints exactly what runs.
//
// The planner is a list of named, pure passes (PassNames):
//
//	lowerQuery        algebra → operator tree; joins of BGPs merged; anything
//	                  else fails with ErrUnsupported (for now)
//	resolveConstants  constants → IDs (unknown: the exploration is Empty),
//	                  variables → columns
//	orderPatterns     the start (a constant; else the type index or a
//	                  predicate index), then the order and direction of the
//	                  steps: depth-first search over the candidate next steps
//	                  with branch-and-bound on the estimated cost (rows looked
//	                  up + rows produced), cheapest candidates first, finished
//	                  greedily past a budget
//	chooseExecMode    per step: local (the rows are partitioned on the step's
//	                  source column), in-place or fork-join; forks when the
//	                  estimated rows reach the threshold Cost.Threshold derives
//	                  from the fabric's read and message costs (or the
//	                  override), unless a mode is forced
//
// Estimates: an expand multiplies the rows by the predicate's average
// fan-out and by the fraction of the source column's values that have the
// predicate at all; a check by the chance that the edge exists (for a type
// check, the class's share of the column's values).
package planner
