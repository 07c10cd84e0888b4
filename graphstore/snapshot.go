package graphstore

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/wukongd/wukongd/rdmakv"
)

// Snapshot directory layout:
//
//	manifest.json     format version, counts, and every file's size and CRC-32C
//	dict.bin          the dictionary (header + sections, see writeDict)
//	stats.json        the planner statistics
//	shard-NNNNN.kv    one rdmakv table region per shard
//
// FormatVersion is the snapshot format this build writes and reads; a
// snapshot with a newer version is refused.
const FormatVersion = 1

const (
	manifestName = "manifest.json"
	dictName     = "dict.bin"
	statsName    = "stats.json"
)

var dictMagic = [8]byte{'W', 'K', 'D', 'I', 'C', 'T', '0', '3'}

// dictMagicV1 is the dictionary of older builds (no literal suffixes: the
// same layout, read as it is). Builds that know only it refuse ours.
var dictMagicV1 = [8]byte{'W', 'K', 'D', 'I', 'C', 'T', '0', '1'}

// dictMagicV2 is the dictionary before the mapped prefix table (its
// prefixes are uvarint-length strings, copied at open); read too.
var dictMagicV2 = [8]byte{'W', 'K', 'D', 'I', 'C', 'T', '0', '2'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrBadSnapshot is returned (wrapped) for a snapshot that is damaged,
// incomplete, or of a newer format.
var ErrBadSnapshot = errors.New("bad snapshot")

// Manifest is the content of manifest.json.
type Manifest struct {
	FormatVersion int    `json:"format_version"`
	Triples       uint64 `json:"triples"`
	Terms         uint64 `json:"terms"`
	Shards        int    `json:"shards"`
	Predicates    int    `json:"predicates_and_classes"`
	// Version is the dataset version the snapshot holds
	// (Dataset.Version; 0 for a freshly loaded one).
	Version uint64     `json:"version,omitempty"`
	Files   []FileInfo `json:"files"`
}

// FileInfo is a file of a snapshot with its size and CRC-32C (Castagnoli).
type FileInfo struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"`
}

// testHookBeforeRename, if set, runs before the snapshot is moved into
// place; tests make it fail to check that a failed write leaves no trace.
var testHookBeforeRename func() error

func shardFileName(i int) string { return fmt.Sprintf("shard-%05d.kv", i) }

// WriteSnapshot writes st into directory dir: into a temporary sibling
// directory first, with every file and the directory fsynced, then renamed
// into place (atomically exchanged with an existing snapshot, which is then
// removed). A failure leaves any previous snapshot at dir intact. Every
// shard of st must be local.
func WriteSnapshot(dir string, st *Store) (err error) {
	for i := 0; i < st.n; i++ {
		if st.regions[i] == nil {
			return fmt.Errorf("cannot write snapshot %s: shard %d is not local", dir, i)
		}
	}
	dir = filepath.Clean(dir)
	tmp, err := createTempDir(dir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	m := Manifest{FormatVersion: FormatVersion, Triples: st.stats.Triples, Terms: uint64(st.dict.Len()),
		Shards: st.n, Predicates: st.dict.NumPredicatesAndClasses()}
	add := func(name string, write func(w io.Writer) error) error {
		fi, err := writeFile(filepath.Join(tmp, name), write)
		if err != nil {
			return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
		}
		m.Files = append(m.Files, fi)
		return nil
	}
	if err := add(dictName, st.dict.writeTo); err != nil {
		return err
	}
	if err := add(statsName, func(w io.Writer) error { return json.NewEncoder(w).Encode(st.stats) }); err != nil {
		return err
	}
	for i, r := range st.regions {
		if err := add(shardFileName(i), func(w io.Writer) error { _, err := w.Write(r.Bytes()); return err }); err != nil {
			return err
		}
	}
	if err := add(manifestName, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}); err != nil {
		return err
	}
	return publishDir(tmp, dir)
}

// createTempDir creates the temporary sibling directory that a snapshot of
// dir (clean) is written into, and dir's parent if need be.
func createTempDir(dir string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("cannot write snapshot %s: %w", dir, err)
	}
	tmp := fmt.Sprintf("%s.tmp-%d-%x", dir, os.Getpid(), rand.Uint32())
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return "", fmt.Errorf("cannot write snapshot %s: %w", dir, err)
	}
	return tmp, nil
}

// publishDir fsyncs the complete snapshot at tmp (its files are fsynced
// already) and moves it to dir (clean): renamed if dir does not exist,
// else atomically exchanged with the previous snapshot, which is then
// removed; the old one's KeptDir moves into the new one first. It refuses
// to replace a dir that is not a snapshot.
func publishDir(tmp, dir string) error {
	if err := syncDir(tmp); err != nil {
		return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
	}
	if testHookBeforeRename != nil {
		if err := testHookBeforeRename(); err != nil {
			return err
		}
	}
	parent := filepath.Dir(dir)
	fi, statErr := os.Stat(dir)
	if statErr != nil {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
		}
		if err := syncDir(parent); err != nil {
			return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
		}
		return nil
	}
	// Never replace something that is not a snapshot: a wrong --out must
	// not delete a user's directory.
	if !fi.IsDir() {
		return fmt.Errorf("cannot write snapshot %s: it exists and is not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, manifestName)); err != nil {
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			return fmt.Errorf("cannot write snapshot %s: it exists and is not a snapshot (no %s)", dir, manifestName)
		}
	}
	// Atomic replacement: exchange the new directory with the old one,
	// then remove the old one (now at tmp). Where the file system cannot
	// exchange, move the old one aside first (a crash between the two
	// renames leaves it at dir+".old-*", complete).
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); err != nil {
		if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EOPNOTSUPP) {
			return fmt.Errorf("cannot replace snapshot %s: %w", dir, err)
		}
		old := fmt.Sprintf("%s.old-%d-%x", dir, os.Getpid(), rand.Uint32())
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("cannot replace snapshot %s: %w", dir, err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			os.Rename(old, dir)
			return fmt.Errorf("cannot replace snapshot %s: %w", dir, err)
		}
		tmp = old
	}
	if err := syncDir(parent); err != nil {
		return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
	}
	if err := carryKept(tmp, dir); err != nil {
		// The old snapshot stays at tmp with the log inside: RestoreKept
		// (at the next start) moves it back.
		return fmt.Errorf("snapshot %s written, but its %s/ could not be moved into it from %s: %w", dir, KeptDir, tmp, err)
	}
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("snapshot %s written, but the old one at %s could not be removed: %w", dir, tmp, err)
	}
	return nil
}

// KeptDir is the subdirectory of a snapshot directory that a new snapshot
// written over it keeps: the data directory's write-ahead log (package
// wal), whose records after the new snapshot's version are still needed.
// WriteSnapshot and WriteDataset move it from the old snapshot into the
// new one right after the exchange (one rename; the log is opened through
// a directory handle, so a server writing it goes on).
const KeptDir = "wal"

// carryKept moves old/KeptDir, if there is one, into dir and syncs both.
func carryKept(old, dir string) error {
	src := filepath.Join(old, KeptDir)
	if _, err := os.Lstat(src); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := os.Rename(src, filepath.Join(dir, KeptDir)); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	return syncDir(old)
}

// RestoreKept finishes what a crash interrupted: if the snapshot
// directory dir has no KeptDir but a temporary or old sibling of a
// snapshot write (dir.tmp-*, dir.old-*) has one, it is moved back into
// dir. Two such siblings are an error (which log is current is unknown).
func RestoreKept(dir string) error {
	dir = filepath.Clean(dir)
	if _, err := os.Lstat(filepath.Join(dir, KeptDir)); err == nil || !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var found []string
	for _, pat := range []string{dir + ".tmp-*", dir + ".old-*"} {
		m, _ := filepath.Glob(filepath.Join(pat, KeptDir))
		found = append(found, m...)
	}
	switch len(found) {
	case 0:
		return nil
	case 1:
		if err := os.Rename(found[0], filepath.Join(dir, KeptDir)); err != nil {
			return fmt.Errorf("cannot move %s back into %s: %w", found[0], dir, err)
		}
		return syncDir(dir)
	}
	return fmt.Errorf("%s has no %s/ but %v do: move the right one back by hand", dir, KeptDir, found)
}

// writeFile creates path, writes it, fsyncs it, and returns its info.
func writeFile(path string, write func(w io.Writer) error) (FileInfo, error) {
	fi := FileInfo{Name: filepath.Base(path)}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fi, err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	cw := &countWriter{w: io.MultiWriter(f, h)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	if err := write(bw); err != nil {
		return fi, fmt.Errorf("%s: %w", fi.Name, err)
	}
	if err := bw.Flush(); err != nil {
		return fi, fmt.Errorf("%s: %w", fi.Name, err)
	}
	if err := f.Sync(); err != nil {
		return fi, fmt.Errorf("%s: %w", fi.Name, err)
	}
	if err := f.Close(); err != nil {
		return fi, fmt.Errorf("%s: %w", fi.Name, err)
	}
	fi.Size, fi.CRC32C = cw.n, h.Sum32()
	return fi, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// dict.bin layout (little-endian): a 64-byte header
//
//	 0 magic [8]byte "WKDICT03" ("WKDICT02": prefixes as uvarint-length
//	   strings; "WKDICT01": no literal suffixes either; both read too)
//	 8 n uint64 (terms)       16 npc uint64          24 hash slots uint64
//	32 arena bytes uint64     40 annotation bytes    48 prefix bytes
//	56 offset width uint32 (3, 4 or 8), hash slot width uint32 (3 or 4;
//	   0 in WKDICT01: 4)
//
// then the sections, each padded to 8 bytes: roles (npc bytes), offsets
// ((n+1)·offset width), hash table (slots·slot width), arena, annotations (per annotation:
// a byte 1 = language tag / 0 = datatype, uvarint length, bytes), IRI
// prefixes (empty, or: count uint64, offset width uint64 (4 or 8),
// (count+1) offsets of that width, the prefixes' bytes back to back;
// mapped as they are at open).
const dictHeaderSize = 64

func pad8(n uint64) uint64 { return (n + 7) &^ 7 }

func (d *Dict) annotBytes() []byte {
	var b []byte
	for _, a := range d.annots {
		if a.lang {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(len(a.s)))
		b = append(b, a.s...)
	}
	return b
}

// prefixBytes is the prefix section: WKDICT03's (see prefixTable), or
// with legacy the uvarint-length strings of WKDICT01/02.
func (d *Dict) prefixBytes(legacy bool) []byte {
	if d.prefixes.n == 0 {
		return nil
	}
	if !legacy {
		return d.prefixes.appendSection(nil)
	}
	var b []byte
	for i := 0; i < d.prefixes.n; i++ {
		p := d.prefixes.at(i)
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

func (d *Dict) writeTo(w io.Writer) error { return d.writeFormat(w, dictMagic) }

// writeFormat writes the dictionary under magic: dictMagic, or an older
// format's (the tests check that older snapshots still open).
func (d *Dict) writeFormat(w io.Writer, magic [8]byte) error {
	ann, pre := d.annotBytes(), d.prefixBytes(magic != dictMagic)
	var h [dictHeaderSize]byte
	copy(h[:], magic[:])
	binary.LittleEndian.PutUint64(h[8:], d.n)
	binary.LittleEndian.PutUint64(h[16:], d.npc)
	binary.LittleEndian.PutUint64(h[24:], d.slots)
	binary.LittleEndian.PutUint64(h[32:], uint64(len(d.arena)))
	binary.LittleEndian.PutUint64(h[40:], uint64(len(ann)))
	binary.LittleEndian.PutUint64(h[48:], uint64(len(pre)))
	binary.LittleEndian.PutUint64(h[56:], d.offW|d.slotW<<32)
	var zeros [8]byte
	for _, sec := range [][]byte{h[:], d.roles, d.offs, d.table, d.arena, ann, pre} {
		if _, err := w.Write(sec); err != nil {
			return err
		}
		if p := pad8(uint64(len(sec))) - uint64(len(sec)); p > 0 {
			if _, err := w.Write(zeros[:p]); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseDict decodes a dict.bin image (mapped) without copying its tables.
func parseDict(b []byte) (*Dict, error) {
	if len(b) < dictHeaderSize || ([8]byte(b[:8]) != dictMagic && [8]byte(b[:8]) != dictMagicV2 && [8]byte(b[:8]) != dictMagicV1) {
		return nil, fmt.Errorf("dictionary: bad header")
	}
	n := binary.LittleEndian.Uint64(b[8:])
	npc := binary.LittleEndian.Uint64(b[16:])
	slots := binary.LittleEndian.Uint64(b[24:])
	arenaLen := binary.LittleEndian.Uint64(b[32:])
	annLen := binary.LittleEndian.Uint64(b[40:])
	preLen := binary.LittleEndian.Uint64(b[48:])
	offW := binary.LittleEndian.Uint64(b[56:])
	slotW := offW >> 32
	offW &= 1<<32 - 1
	if slotW == 0 {
		slotW = 4 // WKDICT01
	}
	const lim = 1 << 50
	if n > lim || npc > n || slots > lim || arenaLen > lim || annLen > lim || preLen > lim || (offW != 3 && offW != 4 && offW != 8) || (slotW != 3 && slotW != 4) {
		return nil, fmt.Errorf("dictionary: implausible header")
	}
	sizes := []uint64{npc, offW * (n + 1), slotW * slots, arenaLen, annLen, preLen}
	secs := make([][]byte, len(sizes))
	off := uint64(dictHeaderSize)
	for i, sz := range sizes {
		if off+sz > uint64(len(b)) {
			return nil, fmt.Errorf("dictionary: section %d beyond the end of the file", i)
		}
		secs[i] = b[off : off+sz]
		off += pad8(sz)
	}
	if off != uint64(len(b)) {
		return nil, fmt.Errorf("dictionary: %d bytes, expected %d", len(b), off)
	}
	d := &Dict{roles: secs[0], offs: secs[1], offW: offW, table: secs[2], slots: slots, slotW: slotW, arena: secs[3], n: n, npc: npc, fp: &dictFP{}}
	var annots []annot
	for a := secs[4]; len(a) > 0; {
		lang := a[0] == 1
		l, k := binary.Uvarint(a[1:])
		if a[0] > 1 || k <= 0 || l > uint64(len(a)-1-k) {
			return nil, fmt.Errorf("dictionary: bad annotation table")
		}
		annots = append(annots, annot{lang: lang, s: string(a[1+k : 1+k+int(l)])})
		a = a[1+k+int(l):]
	}
	d.annots, d.annIdx = newDictAnnots(annots)
	if [8]byte(b[:8]) == dictMagic {
		pt, err := parsePrefixSection(secs[5])
		if err != nil {
			return nil, err
		}
		d.prefixes = pt
	} else {
		// WKDICT01/02: per prefix a uvarint length and the bytes.
		var ps []string
		for a := secs[5]; len(a) > 0; {
			l, k := binary.Uvarint(a)
			if k <= 0 || l > uint64(len(a)-k) {
				return nil, fmt.Errorf("dictionary: bad prefix table")
			}
			ps = append(ps, string(a[k:k+int(l)]))
			a = a[k+int(l):]
		}
		d.prefixes = stringPrefixes(ps)
	}
	if err := d.validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// OpenOptions configures OpenSnapshot.
type OpenOptions struct {
	// Shards lists the shards to open locally; nil opens all. The others
	// are read through Fabric.
	Shards []int
	// Fabric carries reads to the shards not opened here. Nil means a new
	// loopback fabric with one node per shard (then all shards should be
	// opened). With a tcp fabric, open exactly the shards s with
	// s mod Nodes == the local node (or those Place puts on it).
	Fabric rdmakv.Fabric
	// Place, if set, names the fabric node of each shard instead of
	// shard mod Nodes: a cluster with replicas puts every shard it opens
	// on its own node and names another's primary node for the rest
	// (cluster.Placement).
	Place func(shard int) rdmakv.NodeID
	// SkipChecksums skips verifying the files' CRC-32C (which reads every
	// byte once); sizes, headers and bounds are still checked.
	SkipChecksums bool
}

// badSnapshot is the error for a snapshot at dir that is refused.
func badSnapshot(dir, format string, a ...any) error {
	return fmt.Errorf("cannot open snapshot %s: %w: %s", dir, ErrBadSnapshot, fmt.Sprintf(format, a...))
}

// openSnapshotFile maps the file name (slash-separated) of the snapshot at
// dir and checks it against its entry in files, from the manifest: its
// size and, unless skipChecksums, its CRC-32C.
func openSnapshotFile(dir, name string, files map[string]FileInfo, skipChecksums bool) (*rdmakv.Region, error) {
	fi, ok := files[name]
	if !ok {
		return nil, badSnapshot(dir, "%s is not in the manifest", name)
	}
	r, err := rdmakv.MapFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return nil, badSnapshot(dir, "%v", err)
	}
	if n := r.Len(); int64(n) != fi.Size {
		r.Close()
		return nil, badSnapshot(dir, "%s has %d bytes, the manifest says %d", name, n, fi.Size)
	}
	if !skipChecksums {
		if c := crc32.Checksum(r.Bytes(), castagnoli); c != fi.CRC32C {
			r.Close()
			return nil, badSnapshot(dir, "%s: checksum %08x, the manifest says %08x", name, c, fi.CRC32C)
		}
	}
	return r, nil
}

// ReadManifest reads and checks the manifest of the snapshot at dir.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, fmt.Errorf("cannot open snapshot %s: %w: %w", dir, ErrBadSnapshot, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("cannot open snapshot %s: %w: manifest: %w", dir, ErrBadSnapshot, err)
	}
	switch {
	case m.FormatVersion == DatasetFormatVersion:
		return nil, fmt.Errorf("cannot open snapshot %s: %w: it is a dataset with named graphs: open it with OpenDataset", dir, ErrBadSnapshot)
	case m.FormatVersion > FormatVersion:
		return nil, fmt.Errorf("cannot open snapshot %s: %w: format version %d is newer than this build's %d", dir, ErrBadSnapshot, m.FormatVersion, FormatVersion)
	case m.FormatVersion < 1:
		return nil, fmt.Errorf("cannot open snapshot %s: %w: format version %d", dir, ErrBadSnapshot, m.FormatVersion)
	case m.Shards < 1 || m.Shards > 1<<16:
		return nil, fmt.Errorf("cannot open snapshot %s: %w: %d shards", dir, ErrBadSnapshot, m.Shards)
	}
	return &m, nil
}

// openDict opens (with open) and parses a snapshot's dictionary, which
// must hold terms terms; bad makes the errors of a malformed one.
func openDict(open func(name string) (*rdmakv.Region, error), terms uint64, bad func(format string, a ...any) error) (*rdmakv.Region, *Dict, error) {
	r, err := open(dictName)
	if err != nil {
		return nil, nil, err
	}
	dict, err := parseDict(r.Bytes())
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	if uint64(dict.Len()) != terms {
		return nil, nil, bad("dictionary has %d terms, the manifest says %d", dict.Len(), terms)
	}
	return r, dict, nil
}

// OpenSnapshot maps the snapshot at dir and returns a store ready for
// lookups. A truncated, corrupted or newer-format snapshot, or a missing
// file, is refused with an error wrapping ErrBadSnapshot.
func OpenSnapshot(dir string, opts OpenOptions) (st *Store, err error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error { return badSnapshot(dir, format, a...) }
	files := map[string]FileInfo{}
	for _, f := range m.Files {
		files[f.Name] = f
	}
	var mapped []*rdmakv.Region
	defer func() {
		if err != nil {
			for _, r := range mapped {
				r.Close()
			}
		}
	}()
	open := func(name string) (*rdmakv.Region, error) {
		r, err := openSnapshotFile(dir, name, files, opts.SkipChecksums)
		if err == nil {
			mapped = append(mapped, r)
		}
		return r, err
	}
	dr, dict, err := openDict(open, m.Terms, bad)
	if err != nil {
		return nil, err
	}
	dict.region = dr
	sr, err := open(statsName)
	if err != nil {
		return nil, err
	}
	var stats Stats
	if err := json.Unmarshal(sr.Bytes(), &stats); err != nil {
		return nil, bad("statistics: %v", err)
	}
	if stats.Triples != m.Triples {
		return nil, bad("statistics count %d triples, the manifest %d", stats.Triples, m.Triples)
	}
	shards := opts.Shards
	if shards == nil {
		for i := 0; i < m.Shards; i++ {
			shards = append(shards, i)
		}
	}
	regions := make([]*rdmakv.Region, m.Shards)
	for _, i := range shards {
		if i < 0 || i >= m.Shards {
			return nil, fmt.Errorf("cannot open shard %d of snapshot %s with %d shards", i, dir, m.Shards)
		}
		r, err := open(shardFileName(i))
		if err != nil {
			return nil, err
		}
		if _, err := rdmakv.OpenTable(r); err != nil {
			return nil, bad("shard %d: %v", i, err)
		}
		regions[i] = r
	}
	if slices.Index(mapped, sr) >= 0 {
		// Statistics are decoded; their mapping is not needed.
		mapped = slices.DeleteFunc(mapped, func(r *rdmakv.Region) bool { return r == sr })
		sr.Close()
	}
	st, err = newStore(dict, &stats, regions, opts.Fabric, opts.Place)
	if err != nil {
		return nil, fmt.Errorf("cannot open snapshot %s: %w", dir, err)
	}
	return st, nil
}
