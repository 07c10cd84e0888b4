package rdmakv

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Wire format of the tcp fabric. Every frame is a 16-byte header and a
// payload; all integers are little-endian.
//
//	0  u8   kind (frameHello … framePong)
//	1  u8   status: 0 in requests; in replies 0 = ok, else a status code
//	2  u16  reserved, 0
//	4  u32  payload length n; a frame whose n exceeds the connection's
//	        limit (TCPOptions.MaxFrame) is refused before it is read
//	8  u32  request id, chosen by the requester, echoed by the reply
//	12 u32  CRC-32C (Castagnoli) of header bytes 0..11 followed by the
//	        payload; a mismatch breaks the connection
//
// Payloads:
//
//	hello     magic "WKFABRC1", u32 version, u32 nodes, u32 from, u32 to,
//	          u64 cluster id (the dialing node introduces itself)
//	helloAck  u32 node (status ≠ 0: the payload is the refusal's text)
//	read      u32 count, then count × (u32 region, u32 length, u64 offset)
//	readResp  status 0: the requested bytes, concatenated in request order
//	          (length = the sum of the lengths, checked); otherwise u32
//	          index of the failing request and the error's text
//	msg       the message bytes
//	msgAck    empty; status 0 = in the ring, statusRingFull = retry later
//	ping/pong empty (heartbeats)
//
// A connection is opened by the requesting node; the accepting node only
// answers on it. So between two nodes there are two connections, one per
// direction of requests.
const (
	frameHeaderSize = 16
	readEntrySize   = 16
	tcpVersion      = 1

	frameHello    = 1
	frameHelloAck = 2
	frameRead     = 3
	frameReadResp = 4
	frameMsg      = 5
	frameMsgAck   = 6
	framePing     = 7
	framePong     = 8

	statusOK         = 0
	statusNoRegion   = 1
	statusOutOfRange = 2
	statusRingFull   = 3
	statusClosed     = 4
	statusRefused    = 5
	statusBadRequest = 6
)

var helloMagic = [8]byte{'W', 'K', 'F', 'A', 'B', 'R', 'C', '1'}

var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

// ErrBadFrame is returned (wrapped) when a peer sends a frame that is too
// long, fails its checksum or does not parse. The connection is dropped.
var ErrBadFrame = errors.New("bad fabric frame")

// frameHeader is a decoded frame header.
type frameHeader struct {
	kind   byte
	status byte
	n      uint32
	id     uint32
	crc    uint32
}

// appendFrame appends a frame with the given header fields and payload to
// dst.
func appendFrame(dst []byte, kind, status byte, id uint32, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, kind, status, 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = binary.LittleEndian.AppendUint32(dst, id)
	crc := crc32.Update(crc32.Update(0, castagnoliTable, dst[start:start+12]), castagnoliTable, payload)
	dst = binary.LittleEndian.AppendUint32(dst, crc)
	return append(dst, payload...)
}

// beginFrame appends a header whose length and checksum are filled in by
// endFrame once the payload has been appended after it; it returns dst and
// the header's position.
func beginFrame(dst []byte, kind, status byte, id uint32) ([]byte, int) {
	start := len(dst)
	dst = append(dst, kind, status, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(dst[start+8:], id)
	return dst, start
}

// endFrame completes the frame begun at start.
func endFrame(dst []byte, start int) []byte {
	h := dst[start : start+frameHeaderSize]
	binary.LittleEndian.PutUint32(h[4:], uint32(len(dst)-start-frameHeaderSize))
	crc := crc32.Update(crc32.Update(0, castagnoliTable, h[:12]), castagnoliTable, dst[start+frameHeaderSize:])
	binary.LittleEndian.PutUint32(h[12:], crc)
	return dst
}

// readFrame reads one frame from r into buf (grown as needed) and returns
// its header and payload (aliasing buf, valid until the next call). Frames
// longer than limit, with a nonzero reserved field or a bad checksum are
// refused with ErrBadFrame.
func readFrame(r *bufio.Reader, buf []byte, limit int) (frameHeader, []byte, []byte, error) {
	var hb [frameHeaderSize]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		return frameHeader{}, nil, buf, err
	}
	h := frameHeader{kind: hb[0], status: hb[1], n: binary.LittleEndian.Uint32(hb[4:]),
		id: binary.LittleEndian.Uint32(hb[8:]), crc: binary.LittleEndian.Uint32(hb[12:])}
	if hb[2] != 0 || hb[3] != 0 || h.kind < frameHello || h.kind > framePong {
		return h, nil, buf, fmt.Errorf("%w: header %x", ErrBadFrame, hb[:])
	}
	if uint64(h.n) > uint64(limit) {
		return h, nil, buf, fmt.Errorf("%w: payload of %d bytes exceeds the limit of %d", ErrBadFrame, h.n, limit)
	}
	if cap(buf) < int(h.n) {
		buf = make([]byte, h.n, max(int(h.n), 2*cap(buf)))
	}
	p := buf[:h.n]
	if _, err := io.ReadFull(r, p); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return h, nil, buf, err
	}
	crc := crc32.Update(crc32.Update(0, castagnoliTable, hb[:12]), castagnoliTable, p)
	if crc != h.crc {
		return h, nil, buf, fmt.Errorf("%w: checksum %08x, frame says %08x (kind %d, %d bytes)", ErrBadFrame, crc, h.crc, h.kind, h.n)
	}
	return h, p, buf, nil
}

// hello is the payload of a hello frame.
type hello struct {
	version   uint32
	nodes     uint32
	from, to  uint32
	clusterID uint64
}

const helloSize = 8 + 4*4 + 8

func (h hello) append(dst []byte) []byte {
	dst = append(dst, helloMagic[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, h.version)
	dst = binary.LittleEndian.AppendUint32(dst, h.nodes)
	dst = binary.LittleEndian.AppendUint32(dst, h.from)
	dst = binary.LittleEndian.AppendUint32(dst, h.to)
	return binary.LittleEndian.AppendUint64(dst, h.clusterID)
}

func parseHello(p []byte) (hello, error) {
	if len(p) != helloSize || [8]byte(p[:8]) != helloMagic {
		return hello{}, fmt.Errorf("%w: not a wukongd fabric hello (%d bytes)", ErrBadFrame, len(p))
	}
	return hello{
		version: binary.LittleEndian.Uint32(p[8:]), nodes: binary.LittleEndian.Uint32(p[12:]),
		from: binary.LittleEndian.Uint32(p[16:]), to: binary.LittleEndian.Uint32(p[20:]),
		clusterID: binary.LittleEndian.Uint64(p[24:]),
	}, nil
}

// readEntry is one request of a read frame.
type readEntry struct {
	region RegionID
	length uint32
	offset uint64
}

func appendReadEntry(dst []byte, e readEntry) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(e.region))
	dst = binary.LittleEndian.AppendUint32(dst, e.length)
	return binary.LittleEndian.AppendUint64(dst, e.offset)
}

// parseReadRequest checks a read payload and returns its entry count and
// the total bytes requested.
func parseReadRequest(p []byte, maxReply int) (int, uint64, error) {
	if len(p) < 4 {
		return 0, 0, fmt.Errorf("%w: read request of %d bytes", ErrBadFrame, len(p))
	}
	n := int(binary.LittleEndian.Uint32(p))
	if n < 1 || uint64(len(p)-4) != uint64(n)*readEntrySize {
		return 0, 0, fmt.Errorf("%w: read request of %d bytes says %d entries", ErrBadFrame, len(p), n)
	}
	var total uint64
	for i := 0; i < n; i++ {
		total += uint64(readEntryAt(p, i).length)
	}
	if total > uint64(maxReply) {
		return 0, 0, fmt.Errorf("%w: read request for %d bytes exceeds the limit of %d", ErrBadFrame, total, maxReply)
	}
	return n, total, nil
}

func readEntryAt(p []byte, i int) readEntry {
	e := p[4+i*readEntrySize:]
	return readEntry{region: RegionID(binary.LittleEndian.Uint32(e)), length: binary.LittleEndian.Uint32(e[4:]),
		offset: binary.LittleEndian.Uint64(e[8:])}
}
