package rdmakv

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkTCPReadBatch: one ReadBatch of n 128-byte READs to one peer
// over 127.0.0.1 (one frame, one round trip) per operation.
func BenchmarkTCPReadBatch(b *testing.B) {
	c := newTCPCluster(b, 2, nil)
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("reads=%d", n), func(b *testing.B) {
			reqs := make([]ReadRequest, n)
			for i := range reqs {
				reqs[i] = ReadRequest{Node: 1, Region: 1, Offset: uint64(HeaderSize + 128*(i%64)), Dst: make([]byte, 128)}
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.SetBytes(int64(128 * n))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := c.fabs[0].ReadBatch(ctx, 0, reqs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTCPSend: one acknowledged 1 KiB message per operation, the
// receiver draining its ring.
func BenchmarkTCPSend(b *testing.B) {
	c := newTCPCluster(b, 2, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, err := c.fabs[1].Recv(ctx, 1); err != nil {
				return
			}
		}
	}()
	msg := make([]byte, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.fabs[0].Send(ctx, 0, 1, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSimNetReadBatch: the same 16 READs over the simulated network
// (no faults): the cost of the fabric without the kernel.
func BenchmarkSimNetReadBatch(b *testing.B) {
	c := newTCPCluster(b, 2, NewSimNet(1))
	reqs := make([]ReadRequest, 16)
	for i := range reqs {
		reqs[i] = ReadRequest{Node: 1, Region: 1, Offset: uint64(HeaderSize + 128*i), Dst: make([]byte, 128)}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.fabs[0].ReadBatch(ctx, 0, reqs); err != nil {
			b.Fatal(err)
		}
	}
}
