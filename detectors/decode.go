package detectors

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// The encodings the scan decodes, as they appear in the Decoded chains of
// hits ("base64", "base64>percent").
const (
	encBase64  = "base64"
	encHex     = "hex"
	encPercent = "percent"
	encData    = "data" // a data: URL, base64 or percent-encoded
	encJSON    = "json" // JSON text inside a string
)

// Lengths below which a run of base64 or hex letters is not decoded: a
// whole value of 8 with its padding ("ZXYuaW8=": "ev.io") or, inside text,
// 16 letters (where ordinary long words would otherwise be tried).
const (
	decMinWhole = 8
	decMinRun   = 16
	// decProbe is how much of a candidate is decoded to decide whether it is
	// text before the whole of it is: a base64 image is rejected after its
	// first 64 characters (48 bytes), not decoded in full.
	decProbe = 64
)

// decRun is a candidate for base64 or hex decoding: a maximal run of
// base64 letters (both alphabets) and its '=' padding.
type decRun struct {
	start, end int
	hex        bool // every letter is a hex digit
	jwt        bool // a segment of a JSON Web Token ("eyJ..." next to a '.')
}

var decB64Table = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = isLetter(b) || b >= '0' && b <= '9' || b == '+' || b == '/' || b == '-' || b == '_'
	}
	return t
}()

// decFindRuns calls fn for each run of s long enough to be decoded. A run
// inside text is at least decMinRun letters long, so only every
// decMinRun-th byte is probed, and the run around a probe that hits a
// letter is widened.
func decFindRuns(s string, fn func(decRun)) {
	if t := strings.TrimSpace(s); len(t) >= decMinWhole && len(t) < decMinRun+2 {
		e := decRunEnd(t, 0)
		pad := len(t) - e
		if pad <= 2 && strings.TrimRight(t[e:], "=") == "" {
			start := strings.Index(s, t)
			fn(decRunAt(s, start, start+len(t), pad))
			return
		}
	}
	for p := decMinRun - 1; p < len(s); {
		if !decB64Table[s[p]] {
			p += decMinRun
			continue
		}
		a := p
		for a > 0 && decB64Table[s[a-1]] {
			a--
		}
		e := decRunEnd(s, a)
		pad := 0
		for pad < 2 && e+pad < len(s) && s[e+pad] == '=' {
			pad++
		}
		if e-a >= decMinRun {
			fn(decRunAt(s, a, e+pad, pad))
		}
		p = e + pad + decMinRun
	}
}

// decRunEnd returns the end of the run of base64 letters at a.
func decRunEnd(s string, a int) int {
	for a < len(s) && decB64Table[s[a]] {
		a++
	}
	return a
}

func decRunAt(s string, start, end, pad int) decRun {
	r := decRun{start: start, end: end}
	letters := s[start : end-pad]
	r.hex = len(letters)%2 == 0
	for i := 0; i < len(letters) && r.hex; i++ {
		r.hex = ipHexVal(letters[i]) >= 0
	}
	r.jwt = strings.HasPrefix(letters, "eyJ") && (end < len(s) && s[end] == '.' || start > 0 && s[start-1] == '.')
	return r
}

// decBase64 decodes a run in the alphabet it is written in, padded or not.
// probe decodes only its first decProbe letters.
func decBase64(run string, probe bool) ([]byte, bool) {
	r := strings.TrimRight(run, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(r, "-_") {
		if strings.ContainsAny(r, "+/") {
			return nil, false
		}
		enc = base64.RawURLEncoding
	}
	if probe && len(r) > decProbe {
		r = r[:decProbe]
	}
	if len(r)%4 == 1 {
		r = r[:len(r)-1] // a stray letter glued to the end
	}
	b, err := enc.DecodeString(r)
	return b, err == nil
}

func decHexBytes(run string, probe bool) ([]byte, bool) {
	if probe && len(run) > decProbe {
		run = run[:decProbe]
	}
	b, err := hex.DecodeString(run)
	return b, err == nil
}

// decText reports whether decoded bytes are plausibly text: valid UTF-8
// (an incomplete last character allowed when partial, as a probe cuts
// one), and no control characters but tab and newlines: none in a short
// text, one in twenty in a long one.
func decText(b []byte, partial bool) bool {
	if partial {
		for k := 0; k < 3 && len(b) > 0 && !utf8.Valid(b); k++ {
			b = b[:len(b)-1]
		}
	}
	if len(b) == 0 || !utf8.Valid(b) {
		return false
	}
	bad, n := 0, 0
	for _, r := range string(b) {
		n++
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == utf8.RuneError {
			bad++
		}
	}
	if n < 32 {
		return bad == 0
	}
	return bad*20 <= n
}

// decEscapedTokens calls fn for each run of non-blank bytes of s that
// holds a %XX or \xXX escape, saying which it holds first. The next '%'
// and '\' are found with memchr and remembered, so a string of many '%'
// and one '\' at the end is not rescanned for each.
func decEscapedTokens(s string, fn func(start, end int, percent bool)) {
	nextPct, nextBS := -1, -1
	next := func(c byte, from int) int {
		if k := strings.IndexByte(s[from:], c); k >= 0 {
			return from + k
		}
		return len(s)
	}
	for off := 0; off < len(s); {
		if nextPct < off {
			nextPct = next('%', off)
		}
		if nextBS < off {
			nextBS = next('\\', off)
		}
		i := min(nextPct, nextBS)
		if i >= len(s) {
			return
		}
		off = i + 1
		var pct bool
		switch {
		case s[i] == '%' && i+2 < len(s) && ipHexVal(s[i+1]) >= 0 && ipHexVal(s[i+2]) >= 0:
			pct = true
		case s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' && ipHexVal(s[i+2]) >= 0 && ipHexVal(s[i+3]) >= 0:
		default:
			continue
		}
		start, end := i, i
		for start > 0 && !decBlank(s[start-1]) {
			start--
		}
		for end < len(s) && !decBlank(s[end]) {
			end++
		}
		fn(start, end, pct)
		off = end
	}
}

func decBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '<' || c == '>'
}

// decUnescapeHex resolves \xXX escapes.
func decUnescapeHex(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' && ipHexVal(s[i+2]) >= 0 && ipHexVal(s[i+3]) >= 0 {
			b.WriteByte(byte(ipHexVal(s[i+2])<<4 | ipHexVal(s[i+3])))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// dataURL is a data: URL found in text.
type dataURL struct {
	start, end int // the payload's span
	payload    string
	base64     bool
}

// decFindDataURLs calls fn for every data:[<type>][;base64],<payload> in s.
func decFindDataURLs(s string, fn func(dataURL)) {
	for off := 0; off < len(s); {
		i := strings.IndexByte(s[off:], ':')
		if i < 0 {
			return
		}
		i += off
		off = i + 1
		if i < 4 || !strings.EqualFold(s[i-4:i], "data") || i > 4 && isSchemeByte(s[i-5]) {
			continue
		}
		comma := strings.IndexByte(s[i+1:min(len(s), i+258)], ',')
		if comma < 0 {
			continue
		}
		header := s[i+1 : i+1+comma]
		if strings.ContainsAny(header, " \t\r\n\"'<>") {
			continue
		}
		ps := i + 2 + comma
		pe := ps
		for pe < len(s) && !isURLTerminator(s[pe]) {
			pe++
		}
		fn(dataURL{start: ps, end: pe, payload: s[ps:pe], base64: strings.HasSuffix(strings.ToLower(header), ";base64")})
		off = pe
	}
}

// decObfuscating reports an escape of a letter, a digit or one of the
// bytes that make a URL or an address (: / @ . \): escapes that hide
// something rather than quote a blank.
func decObfuscating(tok string) bool {
	for i := 0; i+2 < len(tok); i++ {
		var c byte
		switch {
		case tok[i] == '%' && ipHexVal(tok[i+1]) >= 0 && ipHexVal(tok[i+2]) >= 0:
			c = byte(ipHexVal(tok[i+1])<<4 | ipHexVal(tok[i+2]))
		case tok[i] == '\\' && i+3 < len(tok) && tok[i+1] == 'x' && ipHexVal(tok[i+2]) >= 0 && ipHexVal(tok[i+3]) >= 0:
			c = byte(ipHexVal(tok[i+2])<<4 | ipHexVal(tok[i+3]))
		default:
			continue
		}
		if isLetter(c) || c >= '0' && c <= '9' || strings.IndexByte(":/@.\\", c) >= 0 {
			return true
		}
	}
	return false
}
