package detectors

import (
	"strings"
	"testing"
)

// Benchmarks of the detectors that have no exported function of their
// own: the email finder and the IP parsers, as the scan calls them.
func BenchmarkEmailFind(b *testing.B) {
	typical := "please send the report to ops@acme.example and cc security@acme.example by friday"
	big := strings.Repeat("lorem ipsum dolor sit amet, ", 1<<20/28) + " x@evil.example"
	for name, s := range map[string]string{"typical": typical, "1MiB": big} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				emailFind(s, func(int, int) bool { return false }, func(atMatch) { n++ })
				if n == 0 {
					b.Fatal("want a match")
				}
			}
		})
	}
}

func BenchmarkIPParse(b *testing.B) {
	for _, s := range []string{"10.0.0.1", "0x7f.0.0.1", "2130706433", "017700000001"} {
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, ok := ipParse4(s); !ok {
					b.Fatal("want an address")
				}
			}
		})
	}
	b.Run("ipv6", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := ipParse6("[2001:db8::1]"); !ok {
				b.Fatal("want an address")
			}
		}
	})
}

// BenchmarkScanContentJSON: the scan of a response's raw result, every
// detector (a decided response) and injection markers alone (the response
// gate's check), typical and 16 MiB.
func BenchmarkScanContentJSON(b *testing.B) {
	typical := `{"content":[{"type":"text","text":"` + strings.Repeat("Some result text with a link https://docs.example/x and more words. ", 20) + `"}]}`
	big := `{"content":[{"type":"text","text":"` + strings.Repeat("the quick brown fox jumps over the lazy dog ", (16<<20)/44) + `"}]}`
	for name, raw := range map[string]string{"typical": typical, "16MiB": big} {
		b.Run(name+"/all", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				ScanContentJSON(raw, Options{})
			}
		})
		b.Run(name+"/injection", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				InjectionJSON(raw, Options{})
			}
		})
	}
}
