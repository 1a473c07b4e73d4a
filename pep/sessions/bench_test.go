package sessions_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkState is the per-decision cost: the proxy reads the session
// before every decided frame.
func BenchmarkState(b *testing.B) {
	for _, events := range []int{0, 1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("events=%d", events), func(b *testing.B) {
			s := openStore(b, b.TempDir())
			h := named(b, s, "bench")
			if events == 0 {
				require.NoError(b, h.Refused(ctx)) // a clean session with a file
			}
			for i := range events {
				require.NoError(b, h.Taint(ctx, ev("decision-"+strconv.Itoa(i))))
			}
			b.Run("unchanged", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					st, err := h.State(ctx)
					if err != nil || st.Tainted != (events > 0) {
						b.Fatal(err, st.Tainted)
					}
				}
			})
			// A handle that has not read this version yet: it decodes.
			b.Run("changed", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					fresh := named(b, s, "bench")
					b.StartTimer()
					st, err := fresh.State(ctx)
					if err != nil || st.Tainted != (events > 0) {
						b.Fatal(err, st.Tainted)
					}
				}
			})
		})
	}
	b.Run("no file", func(b *testing.B) {
		h := named(b, openStore(b, b.TempDir()), "bench")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h.State(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTaint is the cost of recording taint before an untrusted result
// is delivered: lock, read, write, two fsyncs, rename.
func BenchmarkTaint(b *testing.B) {
	s := openStore(b, b.TempDir())
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		// A few events per session, as in real use.
		h := named(b, s, "bench-"+strconv.Itoa(i/4))
		if err := h.Taint(ctx, ev("decision-"+strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkRefused counts a refusal: as Taint without the directory fsync.
func BenchmarkRefused(b *testing.B) {
	h := named(b, openStore(b, b.TempDir()), "bench")
	require.NoError(b, h.Taint(ctx, ev("d")))
	b.ReportAllocs()
	for b.Loop() {
		if err := h.Refused(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
