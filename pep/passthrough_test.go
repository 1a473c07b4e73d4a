package pep

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// passThroughProxy is a proxy whose server side discards what it is sent,
// for measuring the pass-through path alone.
func passThroughProxy(t testing.TB) *Proxy {
	p, err := New(Options{Server: "demo", Decider: funcDecider(allowAll), Audit: discardAudit{}})
	require.NoError(t, err)
	p.toServer = NewFrameWriter(io.Discard)
	return p
}

var progress = []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":3,"total":10}}`)

// TestPassThroughDoesNotAllocate: relaying a notification (peek, classify,
// queue, flush) allocates nothing, so a burst makes no garbage.
func TestPassThroughDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	p := passThroughProxy(t)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		p.handleClientFrame(ctx, progress)
		p.flushToServer()
	})
	if allocs != 0 {
		t.Fatalf("a pass-through frame allocates %v times", allocs)
	}
}

func BenchmarkPassThrough(b *testing.B) {
	p := passThroughProxy(b)
	ctx := context.Background()
	b.SetBytes(int64(len(progress)))
	b.ReportAllocs()
	for b.Loop() {
		p.handleClientFrame(ctx, progress)
		p.flushToServer()
	}
}
