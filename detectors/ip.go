package detectors

import (
	"net/netip"
	"strings"
)

// ipParse4 reads every spelling of an IPv4 address that inet_aton(3) and
// the WHATWG URL standard accept: one to four parts separated by dots, each
// decimal, octal (a leading 0) or hexadecimal (a leading 0x), the last part
// filling the remaining bytes ("127.1", "2130706433", "0x7f.1",
// "0177.0.0.1"), and one trailing dot. alt is the address a parser that
// reads leading zeros as decimal would see ("010.0.0.1": 8.0.0.1 for
// inet_aton, 10.0.0.1 for others), when it differs.
func ipParse4(s string) (addr, alt netip.Addr, ok bool) {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 64 {
		return addr, alt, false
	}
	var parts [4]uint64
	n := 0
	leadingZero := false
	for rest := s; ; {
		part, tail, more := strings.Cut(rest, ".")
		if n == 4 || part == "" {
			return addr, alt, false
		}
		v, zero, ok := ipParsePart(part)
		if !ok {
			return addr, alt, false
		}
		leadingZero = leadingZero || zero
		parts[n] = v
		n++
		if !more {
			break
		}
		rest = tail
	}
	var v uint64
	for i := 0; i < n-1; i++ {
		if parts[i] > 255 {
			return addr, alt, false
		}
		v = v<<8 | parts[i]
	}
	last := parts[n-1]
	if last >= 1<<(8*(5-n)) {
		return addr, alt, false
	}
	v = v<<(8*(5-n)) | last
	addr = netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
	if leadingZero && n == 4 {
		if d, ok := ipDottedDecimal(s); ok && d != addr {
			alt = d
		}
	}
	return addr, alt, true
}

// ipParsePart reads one part: 0x-prefixed hex, 0-prefixed octal or
// decimal. zero reports an octal part ("010"). Values beyond 32 bits fail.
func ipParsePart(p string) (v uint64, zero, ok bool) {
	base := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:]
		if p == "" {
			return 0, false, true // "0x" is 0, as in the URL standard
		}
	case len(p) >= 2 && p[0] == '0':
		base, p, zero = 8, p[1:], true
	}
	for i := 0; i < len(p); i++ {
		d := ipHexVal(p[i])
		if d < 0 || uint64(d) >= base {
			return 0, false, false
		}
		v = v*base + uint64(d)
		if v > 0xFFFFFFFF {
			return 0, false, false
		}
	}
	return v, zero, true
}

// ipDottedDecimal reads four decimal parts, leading zeros allowed.
func ipDottedDecimal(s string) (netip.Addr, bool) {
	var b [4]byte
	for i := range 4 {
		part, rest, _ := strings.Cut(s, ".")
		if part == "" || len(part) > 3 || (i == 3) != (rest == "") {
			return netip.Addr{}, false
		}
		v := 0
		for j := 0; j < len(part); j++ {
			if part[j] < '0' || part[j] > '9' {
				return netip.Addr{}, false
			}
			v = v*10 + int(part[j]-'0')
		}
		if v > 255 {
			return netip.Addr{}, false
		}
		b[i] = byte(v)
		s = rest
	}
	return netip.AddrFrom4(b), true
}

// ipIsDottedQuad reports four decimal parts of one to three digits: the only
// IPv4 spelling taken for an address in prose ("1.2.3" is a version).
func ipIsDottedQuad(s string) bool {
	_, ok := ipDottedDecimal(s)
	return ok
}

// ipParse6 reads an IPv6 literal with or without brackets and zone. The
// canonical form is RFC 5952's; an IPv4-mapped address is its IPv4 address.
func ipParse6(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if strings.IndexByte(s, ':') < 0 {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

// ipEndsInNumber reports whether the last label of a host is a number
// (decimal, or 0x hex): the URL standard then reads the host as IPv4, and
// it is an invalid host if that fails.
func ipEndsInNumber(h string) bool {
	h = strings.TrimSuffix(h, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		for i := 2; i < len(last); i++ {
			if ipHexVal(last[i]) < 0 {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			return false
		}
	}
	return true
}

func ipHexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// ipFind6 calls fn for every IPv6 address written in text outside the
// covered spans: a run of hex digits, ':' and '.' (an IPv4 tail) with two
// colons or more and a digit, not glued to a word ("std::vector", a time
// "12:30:00" and a MAC address are not addresses).
func ipFind6(s string, covered func(start, end int) bool, fn func(start, end int, a netip.Addr)) {
	for off := 0; off < len(s); {
		i := strings.IndexByte(s[off:], ':')
		if i < 0 {
			return
		}
		i += off
		ts, te := i, i+1
		for ts > 0 && ip6Byte(s[ts-1]) {
			ts--
		}
		for te < len(s) && ip6Byte(s[te]) {
			te++
		}
		off = te
		tok := strings.TrimRight(s[ts:te], ".:")
		if strings.Count(tok, ":") < 2 || !strings.ContainsAny(tok, "0123456789") ||
			ts > 0 && ipWordByte(s[ts-1]) || te < len(s) && ipWordByte(s[te]) || covered(ts, ts+len(tok)) {
			continue
		}
		if a, ok := ipParse6(tok); ok {
			fn(ts, ts+len(tok), a)
		}
	}
}

func ip6Byte(c byte) bool { return ipHexVal(c) >= 0 || c == ':' || c == '.' }

func ipWordByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_'
}

// ipNumberShaped reports one to three parts of decimal digits ("12345",
// "1.2", "22.1.0"): an IPv4 address to inet_aton, a number, an account or
// a version to a reader.
func ipNumberShaped(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		}
	}
	return true
}
