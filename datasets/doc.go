// Package datasets holds the LUBM data generator (written from the published
// LUBM profile, deterministic for a seed), the LUBM query sets, and the small
// dataset that the embedded default serves.
//
// In: a scale (universities) and a seed. Out: N-Triples, and query texts.
package datasets
