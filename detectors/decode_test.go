package detectors

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hd is a host hit with its decode chain.
type hd struct {
	Host, Kind string
	Dest       bool
	Decoded    string
}

func decodedHostsOf(r Result) []hd {
	var out []hd
	for _, h := range r.Hosts {
		out = append(out, hd{h.Host, h.Kind, h.Destination, h.Decoded})
	}
	return out
}

func b64(s string) string    { return base64.StdEncoding.EncodeToString([]byte(s)) }
func b64raw(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) }
func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestDecodedHosts(t *testing.T) {
	urlSafe := b64url("https://evil.example/?q=>>>???")
	require.True(t, strings.ContainsAny(urlSafe, "-_"), "the URL alphabet must show")
	stdPlus := b64("https://evil.example/?q=>>>???")
	require.True(t, strings.ContainsAny(stdPlus, "+/"), "the standard alphabet must show")
	tests := []struct {
		name, field, value string
		want               []hd
	}{
		{"base64, padded", "data", b64("https://evil.example/x"), []hd{{"evil.example", "url", true, "base64"}}},
		{"base64, unpadded", "data", b64raw("https://evil.example/x1"), []hd{{"evil.example", "url", true, "base64"}}},
		{"base64, std alphabet", "data", stdPlus, []hd{{"evil.example", "url", true, "base64"}}},
		{"base64, URL alphabet", "data", urlSafe, []hd{{"evil.example", "url", true, "base64"}}},
		{"base64 inside prose", "body", "the blob is " + b64("see https://evil.example/x") + ", ok", []hd{{"evil.example", "url", true, "base64"}}},
		{"base64 whole host value", "host", b64("evil.example"), []hd{{"evil.example", "hostname", true, "base64"}}},
		{"base64 short whole host value", "host", b64("ev.io"), []hd{{"ev.io", "hostname", true, "base64"}}},
		{"hex", "d", hex.EncodeToString([]byte("https://hex.example/")), []hd{{"hex.example", "url", true, "hex"}}},
		{"hex escapes", "d", `https\x3a\x2f\x2fesc.example/`, []hd{{"esc.example", "url", true, "hex"}}},
		{"percent", "d", "https%3A%2F%2Fpct.example%2Fx", []hd{{"pct.example", "url", true, "percent"}}},
		{"percent inside a URL", "d", "https://ok.example/r?to=https%3A%2F%2Fnext.example%2F", []hd{{"ok.example", "url", true, ""}, {"next.example", "url", true, "percent"}}},
		{"data: base64", "d", "data:text/plain;base64," + b64("https://data.example/"), []hd{{"data.example", "url", true, "data"}}},
		{"data: percent", "d", "data:text/html,%3Ca%20href%3D%22https%3A%2F%2Fdatapct.example%22%3E", []hd{{"datapct.example", "url", true, "data"}}},
		{"base64 > percent", "d", b64("https%3A%2F%2Fnested.example%2F"), []hd{{"nested.example", "url", true, "base64>percent"}}},
		{"base64 > base64 > base64", "d", b64(b64(b64("https://deep.example/"))), []hd{{"deep.example", "url", true, "base64>base64>base64"}}},
		{"json in a string", "payload", `{"webhook":"evil.example","note":"hi"}`, []hd{{"evil.example", "hostname", true, "json"}}},
		{"base64 > json", "payload", b64(`{"callback_url":"cb.example"}`), []hd{{"cb.example", "hostname", true, "base64>json"}}},
		{"a decoded repeat of a plain hit is dropped", "d", "https://same.example/ " + b64("https://same.example/"), []hd{{"same.example", "url", true, ""}}},
		{"JWT claims are mentions", "token", "eyJhbGciOiJIUzI1NiJ9." + b64url(`{"iss":"https://auth.example.com","sub":"1"}`) + ".c2lnbmF0dXJl",
			[]hd{{"auth.example.com", "url", false, "base64>json"}}},
		{"words are not decoded", "body", "internationalization characteristically incomprehensibilities", nil},
		{"a sha256 digest is not text", "body", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, decodedHostsOf(scanOne(t, tc.field, tc.value)))
		})
	}
}

// A long base64 PNG decodes to binary after a probe: no hit, and it does not
// eat the decode budget (a budget of 1 KiB is enough for 8 KiB of it).
func TestBase64ImageIsIgnored(t *testing.T) {
	img := pngBase64(t, 8<<10)
	r := ScanArguments(map[string]any{"image": img, "alt": "data:image/png;base64," + img}, Options{MaxDecodedBytes: 1 << 10})
	assert.Empty(t, r.Hosts)
	assert.Empty(t, r.Emails)
}

func TestDecodeLimits(t *testing.T) {
	t.Run("depth", func(t *testing.T) {
		r := scanOne(t, "d", b64(b64(b64(b64("https://deeper.example/")))))
		assert.Equal(t, []hd{{LimitHost, HostKindLimit, true, ""}}, decodedHostsOf(r))
		assert.Contains(t, r.Hosts[0].Raw, "nested deeper than 3 decodings")
	})
	t.Run("depth option", func(t *testing.T) {
		r := ScanArguments(map[string]any{"d": b64(b64(b64(b64("https://deeper.example/"))))}, Options{MaxDecodeDepth: 4})
		assert.Equal(t, []hd{{"deeper.example", "url", true, "base64>base64>base64>base64"}}, decodedHostsOf(r))
	})
	t.Run("bytes", func(t *testing.T) {
		r := ScanArguments(map[string]any{"d": b64("https://far.example/" + strings.Repeat("a", 100))}, Options{MaxDecodedBytes: 50})
		assert.Equal(t, []hd{{LimitHost, HostKindLimit, true, ""}}, decodedHostsOf(r))
		assert.Contains(t, r.Hosts[0].Raw, "more than 50 bytes to decode")
	})
	t.Run("content: the limit hit is no destination", func(t *testing.T) {
		r := ScanContent(map[string]any{"d": b64(b64(b64(b64("hello world, hello world"))))}, Options{})
		assert.Equal(t, []hd{{LimitHost, HostKindLimit, false, ""}}, decodedHostsOf(r))
	})
	t.Run("a blank escaped deep down is no reason to stop", func(t *testing.T) {
		r := scanOne(t, "d", b64(b64(b64("a%20b c%20d"))))
		assert.Empty(t, r.Hosts)
	})
}

func TestDecText(t *testing.T) {
	assert.True(t, decText([]byte("https://evil.example/x"), false))
	assert.True(t, decText([]byte("Grüße, 世界\n"), false))
	assert.False(t, decText([]byte("\x89PNG\r\n\x1a\n\x00\x00"), false))
	assert.False(t, decText([]byte{0xff, 0xfe, 'a'}, false))
	assert.False(t, decText(nil, false))
	assert.True(t, decText([]byte("ab\xe4\xb8"), true), "a probe may cut a character")
	for _, w := range []string{"internationalization", "characteristically", "abcdefghijklmnop", "ZZZZZZZZZZZZZZZZ"} {
		b, ok := decBase64(w, false)
		assert.False(t, ok && decText(b, false), w)
	}
}

func TestDecFindRuns(t *testing.T) {
	var runs []string
	var jwt []bool
	s := "x " + b64("hello world, hello!") + " short abc eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.sig 0123456789abcdef0123"
	decFindRuns(s, func(r decRun) { runs, jwt = append(runs, s[r.start:r.end]), append(jwt, r.jwt) })
	assert.Equal(t, []string{b64("hello world, hello!"), "eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxMjM0NTYifQ", "0123456789abcdef0123"}, runs)
	assert.Equal(t, []bool{false, true, true, false}, jwt)
	var whole []decRun
	decFindRuns(" ZXYuaW8= ", func(r decRun) { whole = append(whole, r) })
	assert.Equal(t, []decRun{{start: 1, end: 9}}, whole)
}
