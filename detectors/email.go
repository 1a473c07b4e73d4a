package detectors

import (
	"strings"
	"unicode/utf8"
)

// atMatch is a local@domain found in text: an email address, or (git) an
// scp-style remote "user@host:path".
type atMatch struct {
	raw        string
	start, end int
	local      string
	domain     string // as written; an address literal without its brackets
	literal    bool   // the domain is an address literal
	git        bool
}

// emailFind calls fn for every local@domain in s whose '@' is outside the
// covered spans. The local part is what mail systems and prose agree on
// (letters, digits, . _ % + -); the domain is a dotted name or an address
// literal ([192.0.2.1], [IPv6:...]). A ':' and a path right after the
// domain make it an scp-style remote (git@github.com:acme/x.git).
func emailFind(s string, covered func(start, end int) bool, fn func(atMatch)) {
	for off := 0; off < len(s); {
		i := strings.IndexByte(s[off:], '@')
		if i < 0 {
			return
		}
		i += off
		off = i + 1
		k := i
		for k > 0 && emailLocalByte(s[k-1]) {
			k--
		}
		for k < i && s[k] == '.' {
			k++
		}
		if k == i || covered(i, i+1) {
			continue
		}
		var domain string
		literal := false
		e := i + 1
		if e < len(s) && s[e] == '[' {
			c := strings.IndexByte(s[e:], ']')
			if c < 0 {
				continue
			}
			domain = strings.TrimPrefix(s[e+1:e+c], "IPv6:")
			literal = true
			e += c + 1
		} else {
			for e < len(s) {
				c := s[e]
				if c < 0x80 {
					if !hostNameByte(c) {
						break
					}
					e++
					continue
				}
				r, n := utf8.DecodeRuneInString(s[e:])
				if !hostRuneOK(r) {
					break
				}
				e += n
			}
			for e > i+1 && (s[e-1] == '.' || s[e-1] == '-') {
				e--
			}
			domain = s[i+1 : e]
		}
		if domain == "" {
			continue
		}
		m := atMatch{raw: s[k:e], start: k, end: e, local: s[k:i], domain: domain, literal: literal}
		if e+1 < len(s) && s[e] == ':' && emailPathStart(s[e+1]) {
			m.git = true
			pe := e + 1
			for pe < len(s) && !isURLTerminator(s[pe]) {
				pe++
			}
			m.raw = strings.TrimRight(s[k:pe], ".,;:!?]")
			m.end = k + len(m.raw)
		}
		fn(m)
		off = max(e, m.end) // a remote's path is not searched for more
	}
}

func emailLocalByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// emailPathStart reports a byte that starts the path of an scp-style remote.
func emailPathStart(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '/' || c == '~' || c == '.' || c == '_' || c == '-'
}
