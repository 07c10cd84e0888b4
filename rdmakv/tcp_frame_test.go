package rdmakv

import (
	"bufio"
	"bytes"
	"errors"
	"testing"
)

func TestFrameRoundTripAndChecks(t *testing.T) {
	payload := []byte("some payload bytes")
	fr := appendFrame(nil, frameMsg, 0, 77, payload)
	h, p, _, err := readFrame(bufio.NewReader(bytes.NewReader(fr)), nil, 1024)
	if err != nil || h.kind != frameMsg || h.id != 77 || !bytes.Equal(p, payload) {
		t.Fatalf("round trip: %+v %q %v", h, p, err)
	}
	// beginFrame/endFrame give the same bytes as appendFrame.
	b, at := beginFrame([]byte("prefix"), frameMsg, 0, 77)
	b = endFrame(append(b, payload...), at)
	if !bytes.Equal(b[6:], fr) {
		t.Fatalf("begin/end frame %x, append frame %x", b[6:], fr)
	}
	// Every single-bit flip is refused (checksum, header checks or length).
	for i := 0; i < len(fr)*8; i++ {
		bad := bytes.Clone(fr)
		bad[i/8] ^= 1 << (i % 8)
		_, _, _, err := readFrame(bufio.NewReader(bytes.NewReader(bad)), nil, 1024)
		if err == nil {
			t.Fatalf("bit %d flipped: accepted", i)
		}
	}
	// Over the limit: refused before reading the payload.
	if _, _, _, err := readFrame(bufio.NewReader(bytes.NewReader(fr)), nil, len(payload)-1); !errors.Is(err, ErrBadFrame) {
		t.Fatalf("frame over the limit: %v", err)
	}
	// Truncated.
	if _, _, _, err := readFrame(bufio.NewReader(bytes.NewReader(fr[:len(fr)-1])), nil, 1024); err == nil {
		t.Fatal("truncated frame accepted")
	}
}

func TestParseReadRequest(t *testing.T) {
	req := []byte{2, 0, 0, 0}
	req = appendReadEntry(req, readEntry{region: 1, length: 10, offset: 5})
	req = appendReadEntry(req, readEntry{region: 2, length: 20, offset: 6})
	n, total, err := parseReadRequest(req, 100)
	if err != nil || n != 2 || total != 30 || readEntryAt(req, 1) != (readEntry{region: 2, length: 20, offset: 6}) {
		t.Fatalf("parse: %d %d %v", n, total, err)
	}
	if _, _, err := parseReadRequest(req, 29); !errors.Is(err, ErrBadFrame) {
		t.Fatalf("reply over the limit: %v", err)
	}
	if _, _, err := parseReadRequest(req[:len(req)-1], 100); !errors.Is(err, ErrBadFrame) {
		t.Fatalf("short request: %v", err)
	}
	if _, _, err := parseReadRequest([]byte{0, 0, 0, 0}, 100); !errors.Is(err, ErrBadFrame) {
		t.Fatalf("empty request: %v", err)
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add(appendFrame(nil, frameRead, 0, 1, []byte{1, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}))
	f.Add(appendFrame(nil, frameHello, 0, 0, hello{version: 1, nodes: 3}.append(nil)))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, p, _, err := readFrame(bufio.NewReader(bytes.NewReader(b)), nil, 1<<16)
		if err != nil {
			return
		}
		switch h.kind {
		case frameRead:
			if n, _, err := parseReadRequest(p, 1<<20); err == nil {
				for i := 0; i < n; i++ {
					readEntryAt(p, i)
				}
			}
		case frameHello:
			parseHello(p)
		}
	})
}
