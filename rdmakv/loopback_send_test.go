package rdmakv

import (
	"context"
	"testing"
)

// TestLoopbackSendOwned: Send delivers a copy (the sender may reuse its
// buffer), SendOwned the buffer itself (exec's ports save a copy per
// message); both count as one send of their bytes.
func TestLoopbackSendOwned(t *testing.T) {
	f := NewLoopback(2, LoopbackOptions{})
	defer f.Close()
	ctx := context.Background()

	buf := []byte("copied")
	if err := f.Send(ctx, 0, 1, buf); err != nil {
		t.Fatal(err)
	}
	buf[0] = 'X'
	m, err := f.Recv(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data) != "copied" || m.From != 0 {
		t.Errorf("Send delivered %q from %d, want \"copied\" from 0", m.Data, m.From)
	}

	owned := []byte("owned")
	if err := f.SendOwned(ctx, 1, 0, owned); err != nil {
		t.Fatal(err)
	}
	m, err = f.Recv(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data) != "owned" || m.From != 1 {
		t.Errorf("SendOwned delivered %q from %d, want \"owned\" from 1", m.Data, m.From)
	}
	if &m.Data[0] != &owned[0] {
		t.Errorf("SendOwned copied the buffer")
	}
	if c := f.Counters(); c.Sends != 2 || c.SendBytes != uint64(len("copied")+len("owned")) {
		t.Errorf("counters %+v, want 2 sends of %d bytes", c, len("copied")+len("owned"))
	}
	f.Close()
	if err := f.SendOwned(ctx, 0, 1, []byte("late")); err == nil {
		t.Errorf("SendOwned on a closed fabric: no error")
	}
}
