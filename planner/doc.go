// Package planner turns the SPARQL algebra into a physical plan for the
// exploration engine (DESIGN.md §5).
//
// In: a *sparql.Query, a Catalog (term → ID, from the dictionary), Stats
// (per predicate triples and distinct subjects/objects, per class
// instances, the shard count) and Options (forced Mode, ForkThreshold,
// fabric Cost, ConstEval). Out: a *Plan: the query form (SELECT, ASK,
// CONSTRUCT with its template, DESCRIBE with its exploration) and a tree of
// Explore / Join / LeftJoin / Union / Minus / Filter / Extend / Group /
// Values / PathScan / GraphScan / Project / Distinct / OrderBy / Slice
// nodes (plus SeedRef / Let for rows shared through slots, and a plan per
// EXISTS pattern) that states every physical choice, so exec never
// re-decides and EXPLAIN prints exactly what runs.
//
// The planner is a list of named, pure passes (PassNames):
//
//	lowerQuery        algebra → operator tree; joins of BGPs merged. A pattern
//	                  is lowered "from a seed" — the rows it joins with: the
//	                  right side of a Join from its left side, the right side
//	                  of OPTIONAL from its numbered left rows, an EXISTS
//	                  pattern from the rows it tests (substituting them, so
//	                  its FILTERs see them). A BGP from a seed whose shared
//	                  variables are bound in every seed row becomes a join
//	                  candidate (seeded or not); where seeding would change
//	                  what a FILTER or BIND sees (it reads a variable the
//	                  seed binds and the pattern may not), the pattern runs
//	                  on its own and is hash-joined. Scopes (may-bind and
//	                  always-bind variables) come from the algebra. SERVICE
//	                  fails with ErrUnsupported.
//	foldConstants     subexpressions without variables evaluated once
//	                  (Options.ConstEval; not RAND, NOW, UUID, STRUUID, BNODE,
//	                  IRI); FILTER conditions that fold to true dropped
//	resolveConstants  constants → IDs (unknown: the exploration is Empty),
//	                  variables → columns
//	orderPatterns     the start (a constant; else the type index or a
//	                  predicate index), then the order and direction of the
//	                  steps: depth-first search over the candidate next steps
//	                  with branch-and-bound on the estimated cost (rows looked
//	                  up + rows produced), cheapest candidates first, finished
//	                  greedily past a budget; a seeded exploration starts from
//	                  the seed's estimated rows with its shared variables bound;
//	                  the search stops with the error of Options.Ctx once that
//	                  is done (checked every 256 partial orders). A type check
//	                  right after the expansion binding its variable is fused
//	                  into it (Step.TypeCheck), except when fork-join is forced
//	chooseJoins       per join candidate: bind join (the seeded exploration's
//	                  cost) or hash join (the exploration on its own, plus a
//	                  pass over both sides' rows), whichever is cheaper; the
//	                  costs compared are kept in the plan (Join.Why)
//	pushFilters       each conjunct of a FILTER over an exploration (also
//	                  through a bind join and the left side of OPTIONAL), and
//	                  of an OPTIONAL's own filter over its right side's
//	                  exploration, runs inside it right after the step binding
//	                  the last variable it reads (a seed's carried columns are
//	                  there from the start); conjuncts with EXISTS or reading
//	                  variables the exploration does not have stay on the
//	                  table
//	chooseExecMode    per step: local (the rows are partitioned on the step's
//	                  source column), in-place or fork-join; forks when the
//	                  estimated rows reach the threshold Cost.Threshold derives
//	                  from the fabric's read and message costs (times the
//	                  nodes that would fork, once rows are spread), or for an
//	                  index step Cost.IndexThreshold (rows only come back), or
//	                  the override, unless a mode is forced; type checks
//	                  (bitmaps in exec, no remote read per row) stay in place
//
// Estimates: an expand multiplies the rows by the predicate's average
// fan-out and by the fraction of the source column's values that have the
// predicate at all; a check by the chance that the edge exists (for a type
// check, the class's share of the column's values).
package planner
