package rdmakv

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// RegionID names a registered region of a node. In a graph store it is the
// shard number, so a region keeps its name when shards move between nodes.
type RegionID uint32

// Region is a registered region: a flat byte arena addressed by offset,
// holding no Go pointers, so a peer can read any byte range of it one-sidedly.
// It is backed by memory or by a read-only shared mapping of a file.
//
// A Region is immutable once registered; its bytes may be read concurrently.
type Region struct {
	buf    []byte
	mapped bool
}

// NewRegion returns a region over buf. The caller must not modify buf
// afterwards.
func NewRegion(buf []byte) *Region { return &Region{buf: buf} }

// MapFile maps the whole file at path read-only into a region. The mapping
// stays valid until Close; slices obtained from Bytes must not be used after.
func MapFile(path string) (*Region, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot map %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot map %s: %w", path, err)
	}
	size := st.Size()
	if size == 0 {
		return &Region{}, nil
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("cannot map %s: size %d too large", path, size)
	}
	buf, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("cannot map %s: %w", path, err)
	}
	return &Region{buf: buf, mapped: true}, nil
}

// Bytes returns the region's bytes. They must not be modified.
func (r *Region) Bytes() []byte { return r.buf }

// Len returns the size of the region in bytes.
func (r *Region) Len() int { return len(r.buf) }

// Mapped reports whether the region is a file mapping.
func (r *Region) Mapped() bool { return r.mapped }

// Close releases a file mapping; for a memory region it only drops the
// reference. The region must not be used afterwards.
func (r *Region) Close() error {
	buf, mapped := r.buf, r.mapped
	r.buf, r.mapped = nil, false
	if mapped && len(buf) > 0 {
		if err := unix.Munmap(buf); err != nil {
			return fmt.Errorf("cannot unmap region: %w", err)
		}
	}
	return nil
}
