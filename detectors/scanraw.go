package detectors

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// ScanContentJSON is ScanContent over raw JSON text (a result as it came
// off the wire) instead of a decoded value: the same hits, without a
// decoded copy of the content. A 16 MiB tool result is walked in place;
// only strings with escapes are unescaped, one at a time. raw must be
// valid JSON (the proxy validated the frame); invalid JSON is walked as
// far as it parses.
//
// The hits own their strings: none of them aliases raw, so raw may be a
// view of a buffer that is reused after the scan.
func ScanContentJSON(raw string, opts Options) Result {
	sc := newScanner(opts, true)
	sc.det = textDetectors{FindSecrets, FindInjection, FindPaths}
	sc.walkRaw(gjson.Parse(raw), scanCtx{level: levelDest}, 0)
	return cloneResult(sc.res)
}

// InjectionJSON returns the injection hits ScanContentJSON would report for
// raw, without running the other detectors: the proxy's check of whether a
// response needs a decision at all, when markers are all that would make it.
func InjectionJSON(raw string, opts Options) []InjectionHit {
	sc := newScanner(opts, true)
	sc.det = textDetectors{FindSecrets, FindInjection, FindPaths}
	sc.injectionOnly = true
	sc.walkRaw(gjson.Parse(raw), scanCtx{level: levelDest}, 0)
	return cloneResult(Result{Injection: sc.res.Injection}).Injection
}

// walkRaw is walk for a gjson value, in content mode (no field roles, no
// split hosts: ScanContent has neither).
func (sc *scanner) walkRaw(v gjson.Result, c scanCtx, depth int) {
	if depth > MaxScanDepth {
		sc.limit(c.path, "nesting deeper than "+strconv.Itoa(MaxScanDepth)+" levels was not scanned")
		return
	}
	switch {
	case v.Type == gjson.String:
		sc.scanString(validUTF8(v.Str), c)
	case v.Type == gjson.Number:
		if c.dest {
			sc.wholeHost(v.Raw, c)
		}
	case v.IsObject():
		// Keys in order, as walk sorts a decoded object's keys, so both
		// report hits in the same order. A repeated key is walked each
		// time (a decoder would keep only the last).
		type member struct {
			key   string
			value gjson.Result
		}
		var members []member
		v.ForEach(func(k, val gjson.Result) bool {
			members = append(members, member{validUTF8(k.Str), val})
			return true
		})
		slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		for _, m := range members {
			sc.walkRaw(m.value, sc.enterKey(c, m.key), depth+1)
		}
	case v.IsArray():
		i := 0
		v.ForEach(func(_, item gjson.Result) bool {
			ic := c
			if !c.fixed {
				ic.path = c.path + "/" + strconv.Itoa(i)
			}
			sc.walkRaw(item, ic, depth+1)
			i++
			return true
		})
	}
}

// validUTF8 is s as encoding/json decodes it: each byte that is not part
// of valid UTF-8 becomes U+FFFD, so that both walks scan the same text.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// cloneResult copies every string of r, so that no hit points into the
// text that was scanned.
func cloneResult(r Result) Result {
	for i := range r.Hosts {
		h := &r.Hosts[i]
		h.Host, h.Raw, h.Kind, h.Path = strings.Clone(h.Host), strings.Clone(h.Raw), strings.Clone(h.Kind), strings.Clone(h.Path)
		h.Field, h.Unicode, h.Decoded = strings.Clone(h.Field), strings.Clone(h.Unicode), strings.Clone(h.Decoded)
	}
	for i := range r.Emails {
		e := &r.Emails[i]
		e.Address, e.Domain, e.Path = strings.Clone(e.Address), strings.Clone(e.Domain), strings.Clone(e.Path)
		e.Field, e.Decoded = strings.Clone(e.Field), strings.Clone(e.Decoded)
	}
	for i := range r.Secrets {
		s := &r.Secrets[i]
		s.Kind, s.Path, s.Redacted, s.Decoded = strings.Clone(s.Kind), strings.Clone(s.Path), strings.Clone(s.Redacted), strings.Clone(s.Decoded)
	}
	for i := range r.Paths {
		p := &r.Paths[i]
		p.Path, p.Raw, p.Arg, p.Decoded = strings.Clone(p.Path), strings.Clone(p.Raw), strings.Clone(p.Arg), strings.Clone(p.Decoded)
		p.Protected = slices.Clone(p.Protected)
	}
	for i := range r.Injection {
		h := &r.Injection[i]
		h.Kind, h.Path, h.Decoded = strings.Clone(h.Kind), strings.Clone(h.Path), strings.Clone(h.Decoded)
	}
	return r
}
