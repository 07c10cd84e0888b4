// Package rdmakv is the RDMA-readable key/value layer: registered regions
// (flat byte arenas addressed by offsets, in memory or mapped from a file), a
// DrTM-KV style cluster-hashing table over a region, and the Fabric interface
// through which one node reads another node's regions one-sidedly and sends it
// messages.
//
// In: keys (uint64) and sorted ID lists from graphstore. Out: the ID list for a
// key, read locally or through a Fabric, and operation/byte counters.
package rdmakv
