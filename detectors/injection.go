package detectors

import (
	"encoding/binary"
	"sort"
	"strings"
	"unicode/utf8"
)

// Kinds of injection marker (InjectionMatch.Kind, InjectionHit.Kind).
const (
	// InjectionKindFakeSystem is text that poses as a system, developer or
	// assistant turn or a chat-template frame: "SYSTEM WARNING:",
	// "[SYSTEM]", "<|im_start|>", "### System:", "<system>", "[INST]",
	// "<<SYS>>", "<IMPORTANT>", Human:/Assistant: at a line start,
	// {"role":"system"...}.
	InjectionKindFakeSystem = "fake_system_message"
	// InjectionKindIgnoreInstructions is "ignore previous instructions",
	// "disregard the above", "forget your instructions", "new
	// instructions:", "you are now DAN" and their variants.
	InjectionKindIgnoreInstructions = "ignore_instructions"
	// InjectionKindExfiltration asks to send data out: a sending verb with
	// a secret-ish object and "to https://…", or a sending verb before a
	// credential file (.env, ~/.ssh, id_rsa, .aws/credentials, ...).
	InjectionKindExfiltration = "exfiltration_request"
	// InjectionKindSelfReplication asks to copy the text itself into
	// every later message, reply, file or email.
	InjectionKindSelfReplication = "self_replication"
	// InjectionKindHiddenText is invisible text: zero-width characters,
	// Unicode tag characters (ASCII smuggling), bidi controls, runs of
	// variation selectors.
	InjectionKindHiddenText = "hidden_text"
	// InjectionKindANSIEscape is a terminal escape sequence (ESC [ CSI,
	// ESC ] OSC, other ESC sequences, C1 CSI/OSC).
	InjectionKindANSIEscape = "ansi_escape"
)

// injMaxMatches caps the matches FindInjection returns for one string.
const injMaxMatches = 100

// injMaxStrips caps the hidden characters and escape sequences removed
// from the copy the phrases are matched in (beyond it the string already
// has injMaxMatches hidden_text or ansi_escape matches).
const injMaxStrips = 4096

// InjectionMatch is a prompt-injection marker found in a string.
type InjectionMatch struct {
	Kind       string
	Start, End int
}

// FindInjection returns the injection markers in s, one match per
// occurrence, in order of Start, at most 100. Overlapping matches of one
// kind are merged.
//
// The markers are signals, not a boundary: they feed taint and manifest
// rules. Decisions on text that is legitimate:
//   - ZWJ (U+200D) between two emoji (👨‍👩‍👧), ZWJ/ZWNJ after a letter of a
//     script that uses them (Arabic, Persian, Syriac, Indic, Sinhala,
//     Myanmar, Khmer, Mongolian, Tibetan), ZWSP after a letter of a script
//     written without spaces (Thai, Lao, Khmer, Myanmar, Tibetan), a BOM
//     at offset 0, tag characters in an emoji flag sequence (🏴 + tags +
//     CANCEL TAG) and one ideographic variation selector after a CJK
//     ideograph are not hidden text. Everything else in those sets is.
//   - RTL text is not flagged; its implicit marks (LRM, RLM, ALM) are not
//     either. Bidi embedding, override and isolate controls always are:
//     they reorder what a reader sees (Trojan Source).
//   - Terminal escapes are flagged even when they only colour text: a tool
//     result is read by a model and shown in terminals, where escapes can
//     hide, overwrite or retitle text; colour is no reason to carry them.
//
// The phrase rules are kept tight (each is a verifier behind an anchor):
//   - fake_system_message: "system", with an optional qualifier (warning,
//     message, notice, override, prompt, ...), framed as [SYSTEM…],
//     <system…>, <|system|>, or followed by ':' at a line start
//     (capitalised; when bare, not followed by code) or mid-line after a
//     sentence boundary (capitalised); Human:/Assistant: at a line start;
//     "role": "system"|"developer" beside a "content" or "parts" key;
//     chat-template tokens <|…|>, <<SYS>>, [INST], <start_of_turn>; the
//     tags <IMPORTANT> and <developer…>.
//   - ignore_instructions: ignore|disregard|forget + qualifiers, one of
//     which points back at the instructions in force (previous, prior,
//     above, your, system, ...), + instructions|prompt|rules|...; or +
//     a position word that ends the clause ("disregard the above.");
//     "(New|Updated|...) instructions:" at a sentence start; "you are
//     now" + DAN | jailbroken | in developer mode | no longer bound | free
//     of all restrictions | a/an … AI/assistant/model.
//   - exfiltration_request: a sending verb (send, post, upload, forward,
//     email, ...; not negated) within 14 words before "to|into|at|via
//     <http(s) URL>" with a secret-ish word or credential path between; or
//     within 8 words before a credential path (.env*, ~/.ssh, id_rsa,
//     .aws/credentials, /etc/passwd, ...) or 6 before "contents of" one.
//   - self_replication: repeat|include|append|insert|copy|add|paste|... +
//     this|these|the following|the above|it + … + in|into|to + every|each|
//     all|any|future|subsequent … + message|reply|response|email|file|
//     output|commit|comment|post|....
//
// Phrases are matched ASCII-case-insensitively, across any whitespace
// between words, and, when s holds hidden characters or escapes, also in
// the text with those removed ("ig\u200bnore"). Text smuggled in tag
// characters is decoded and matched too; its matches cover the tag
// characters. Only the "you are now" family needs its words separated by
// a single whitespace character (its anchor spans the blank). Homoglyphs
// (Cyrillic о in "ignоre") are not folded.
//
// Cost: the phrases are found by sampling a 4-byte window every 3 bytes
// and looking its hash up in a 64 KiB table of the hashes of the 4-grams
// of 6-byte anchors (every occurrence of an anchor contains a sampled
// window), then verifying the rare candidates; the rest are
// strings.IndexByte passes over bytes rare in prose (ESC, '<', and the
// lead bytes of the invisible characters when s is not ASCII). Every
// verifier looks at a bounded number of words, so the time is linear in
// len(s) on any input.
func FindInjection(s string) []InjectionMatch {
	c := injCollector{s: s}
	// Phrases first: the same pass tells whether s has any non-ASCII byte,
	// without which there is no hidden character and no C1 control.
	nonASCII := c.scanPhrases(s, nil)
	phrases := len(c.matches)
	c.scanANSI(nonASCII)
	if nonASCII {
		c.scanHidden()
	}
	if len(c.strips) > 0 {
		// Match the phrases again in the text without the hidden
		// characters and escapes (a superset of the first matches).
		c.matches = append(c.matches[:0], c.matches[phrases:]...)
		t, m := c.cleanCopy()
		c.scanPhrases(t, m)
	}
	for _, p := range c.smuggled {
		c.scanPhrases(p.text, &injMap{tag: true, base: p.start})
	}
	return c.result()
}

type injCollector struct {
	s        string
	matches  []InjectionMatch
	strips   [][2]int // byte ranges of s removed before matching phrases
	smuggled []injSmuggled
}

// injSmuggled is ASCII text decoded from a run of tag characters at start.
type injSmuggled struct {
	start int
	text  string
}

func (c *injCollector) full() bool { return len(c.matches) >= 4*injMaxMatches }

func (c *injCollector) add(kind string, start, end int) {
	if start < 0 || end > len(c.s) || start >= end || c.full() {
		return
	}
	c.matches = append(c.matches, InjectionMatch{Kind: kind, Start: start, End: end})
}

func (c *injCollector) result() []InjectionMatch {
	if len(c.matches) == 0 {
		return nil
	}
	ms := c.matches
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Start != ms[j].Start {
			return ms[i].Start < ms[j].Start
		}
		return ms[i].End > ms[j].End
	})
	out := ms[:0:0]
	last := map[string]int{} // kind -> index in out of its last match
	for _, m := range ms {
		if i, ok := last[m.Kind]; ok && out[i].End > m.Start {
			out[i].End = max(out[i].End, m.End) // same kind, overlapping: one occurrence
			continue
		}
		last[m.Kind] = len(out)
		out = append(out, m)
	}
	if len(out) > injMaxMatches {
		out = out[:injMaxMatches]
	}
	return out
}

// ---- hidden text ----

// scanHidden finds runs of invisible characters. It visits the lead bytes
// E2 (U+2000 block), EF (U+FE00 block) and F3 (plane 14) with
// strings.IndexByte, and extends each flagged character over the flagged
// characters that follow it.
func (c *injCollector) scanHidden() {
	s := c.s
	next := [3]int{-1, -1, -1}
	leads := [3]byte{0xE2, 0xEF, 0xF3}
	for off := 0; off < len(s); {
		i := len(s)
		for k, b := range leads {
			if next[k] < off {
				if j := strings.IndexByte(s[off:], b); j >= 0 {
					next[k] = off + j
				} else {
					next[k] = len(s)
				}
			}
			i = min(i, next[k])
		}
		if i >= len(s) {
			return
		}
		n := c.hiddenAt(i)
		if n == 0 {
			off = i + 1
			continue
		}
		end := i + n
		for end < len(s) {
			m := c.hiddenAt(end)
			if m == 0 {
				break
			}
			end += m
		}
		c.add(InjectionKindHiddenText, i, end)
		if len(c.strips) < injMaxStrips {
			c.strips = append(c.strips, [2]int{i, end})
		}
		c.decodeTags(i, end)
		off = end
		if len(c.matches) >= injMaxMatches && len(c.strips) >= injMaxStrips {
			return
		}
	}
}

// hiddenAt returns the length of the flagged invisible character at i, or
// 0 if there is none (or it is one of the legitimate uses).
func (c *injCollector) hiddenAt(i int) int {
	s := c.s
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == 0x200B: // ZWSP
		if injNoSpaceScript(injPrevRune(s, i)) {
			return 0
		}
	case r == 0x200C: // ZWNJ
		if injJoiningScript(injPrevRune(s, i)) {
			return 0
		}
	case r == 0x200D: // ZWJ
		prev := injPrevRune(s, i)
		if injJoiningScript(prev) {
			return 0
		}
		if nr, _ := utf8.DecodeRuneInString(s[i+n:]); injEmojiLike(prev) && injEmojiLike(nr) {
			return 0
		}
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069: // bidi controls
	case r >= 0x2060 && r <= 0x2064: // word joiner, invisible operators
	case r == 0xFEFF:
		if i == 0 {
			return 0 // byte order mark
		}
	case r >= 0xE0000 && r <= 0xE007F: // tags
		if injInFlagSequence(s, i) {
			return 0
		}
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF: // variation selectors
		if !injVSFlagged(s, i, n, r) {
			return 0
		}
	default:
		return 0
	}
	return n
}

func injPrevRune(s string, i int) rune {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return r
}

// injVSFlagged: variation selectors are flagged in runs of two or more
// (bytes smuggled one selector each), and a supplementary selector
// (U+E0100–U+E01EF) also alone unless it follows a CJK ideograph. It looks
// at the neighbours only, so a long run costs linear time.
func injVSFlagged(s string, i, n int, r rune) bool {
	prev := injPrevRune(s, i)
	next, _ := utf8.DecodeRuneInString(s[i+n:])
	if injIsVS(prev) || injIsVS(next) {
		return true
	}
	return r >= 0xE0100 && !injCJK(prev)
}

func injIsVS(r rune) bool { return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF }

// injInFlagSequence reports a tag character inside an emoji tag sequence:
// U+1F3F4, 1 to 7 tags among 0-9 a-z, U+E007F. It looks at most 8 tags
// back and 8 forward, so a long run of tags costs linear time.
func injInFlagSequence(s string, i int) bool {
	j := i
	for k := 0; k < 8 && j > 0; k++ {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		if r < 0xE0000 || r > 0xE007F {
			break
		}
		j -= n
	}
	if injPrevRune(s, j) != 0x1F3F4 {
		return false
	}
	count := 0
	for k := j; k < len(s); {
		r, n := utf8.DecodeRuneInString(s[k:])
		switch {
		case r == 0xE007F:
			return count >= 1 && k >= i
		case r >= 0xE0030 && r <= 0xE0039, r >= 0xE0061 && r <= 0xE007A:
			count++
			if count > 7 {
				return false
			}
		default:
			return false
		}
		k += n
	}
	return false
}

// decodeTags keeps the ASCII text a run of tag characters spells, for the
// phrase matchers.
func (c *injCollector) decodeTags(start, end int) {
	var b strings.Builder
	for k := start; k < end; {
		r, n := utf8.DecodeRuneInString(c.s[k:])
		if r < 0xE0020 || r > 0xE007E || n != 4 {
			break
		}
		b.WriteByte(byte(r - 0xE0000))
		k += n
	}
	if b.Len() >= 8 && len(c.smuggled) < 16 {
		c.smuggled = append(c.smuggled, injSmuggled{start: start, text: b.String()})
	}
}

func injEmojiLike(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF, r >= 0x2B00 && r <= 0x2BFF,
		r >= 0x2300 && r <= 0x23FF, r >= 0x2190 && r <= 0x21FF, r >= 0x2900 && r <= 0x297F:
		return true
	}
	switch r {
	case 0xFE0F, 0x20E3, 0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x2139, 0x3030, 0x303D, 0x3297, 0x3299:
		return true
	}
	return false
}

// injJoiningScript: scripts whose orthography uses ZWJ/ZWNJ: Arabic
// (with its supplements and presentation forms), Syriac, the Brahmic
// scripts from Devanagari to Sinhala, Tibetan, Myanmar, Khmer, Mongolian.
func injJoiningScript(r rune) bool {
	switch {
	case r >= 0x0600 && r <= 0x077F, r >= 0x0860 && r <= 0x08FF, r >= 0xFB50 && r <= 0xFDFF, r >= 0xFE70 && r <= 0xFEFC:
		return true
	case r >= 0x0900 && r <= 0x0DFF, r >= 0xA8E0 && r <= 0xA8FF:
		return true
	case r >= 0x0F00 && r <= 0x109F, r >= 0x1780 && r <= 0x18AF:
		return true
	}
	return false
}

// injNoSpaceScript: scripts written without spaces, where ZWSP marks word
// breaks.
func injNoSpaceScript(r rune) bool {
	return r >= 0x0E00 && r <= 0x0EFF || r >= 0x0F00 && r <= 0x0FFF || r >= 0x1000 && r <= 0x109F || r >= 0x1780 && r <= 0x17FF
}

func injCJK(r rune) bool {
	return r >= 0x3400 && r <= 0x4DBF || r >= 0x4E00 && r <= 0x9FFF || r >= 0xF900 && r <= 0xFAFF || r >= 0x20000 && r <= 0x3FFFF
}

// ---- terminal escapes ----

// scanANSI finds ESC-introduced sequences and the C1 controls CSI (U+009B)
// and OSC (U+009D); each sequence is one match spanning to its final byte
// or string terminator (bounded).
func (c *injCollector) scanANSI(nonASCII bool) {
	s := c.s
	leads := []byte{0x1B, 0xC2}
	if !nonASCII {
		leads = leads[:1]
	}
	for _, lead := range leads {
		for off := 0; off < len(s); {
			k := strings.IndexByte(s[off:], lead)
			if k < 0 {
				break
			}
			i := off + k
			end := injEscapeEnd(s, i)
			if end == i {
				off = i + 1
				continue
			}
			c.add(InjectionKindANSIEscape, i, end)
			if len(c.strips) < injMaxStrips {
				c.strips = append(c.strips, [2]int{i, end})
			}
			off = end
			if len(c.matches) >= injMaxMatches && len(c.strips) >= injMaxStrips {
				break
			}
		}
	}
}

// injEscapeEnd returns the end of the escape sequence at i, or i if there
// is none.
func injEscapeEnd(s string, i int) int {
	var kind byte // '[' CSI, ']' OSC, 'P' '_' '^' 'X' string sequences
	j := i + 1
	if s[i] == 0xC2 {
		if i+1 >= len(s) || s[i+1] != 0x9B && s[i+1] != 0x9D {
			return i
		}
		kind, j = '[', i+2
		if s[i+1] == 0x9D {
			kind = ']'
		}
	} else {
		if j >= len(s) {
			return j // a lone ESC at the end
		}
		kind = s[j]
		j++
	}
	switch kind {
	case '[': // CSI: parameters 0x30–0x3F, intermediates 0x20–0x2F, final 0x40–0x7E
		limit := min(len(s), j+64)
		for j < limit && s[j] >= 0x20 && s[j] <= 0x3F {
			j++
		}
		if j < limit && s[j] >= 0x40 && s[j] <= 0x7E {
			j++
		}
		return j
	case ']', 'P', '_', '^', 'X': // terminated by BEL or ST (ESC \)
		limit := min(len(s), j+4096)
		for j < limit {
			switch {
			case s[j] == 0x07:
				return j + 1
			case s[j] == 0x1B && j+1 < len(s) && s[j+1] == '\\':
				return j + 2
			case s[j] == 0xC2 && j+1 < len(s) && s[j+1] == 0x9C:
				return j + 2
			case s[j] == '\n' && kind != ']':
				return j
			}
			j++
		}
		return j
	default: // ESC, intermediates, a final byte (ESC c, ESC 7, ESC ( B)
		j--
		for j < len(s) && j < i+8 && s[j] >= 0x20 && s[j] <= 0x2F {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7E {
			j++
		}
		return max(j, i+1)
	}
}

// ---- the copy phrases are matched in ----

// injMap maps offsets of the text phrases were matched in back to s.
type injMap struct {
	// segs: text[segs[k].t:] starts at s[segs[k].s:] until the next segment.
	segs []struct{ t, s int }
	tag  bool // text decoded from tag characters at base: byte k is s[base+4k:]
	base int
}

func (m *injMap) start(t int) int {
	if m == nil {
		return t
	}
	if m.tag {
		return m.base + 4*t
	}
	k := sort.Search(len(m.segs), func(k int) bool { return m.segs[k].t > t }) - 1
	return m.segs[k].s + t - m.segs[k].t
}

func (m *injMap) end(t int) int {
	if m == nil || t == 0 {
		return t
	}
	if m.tag {
		return m.base + 4*t
	}
	return m.start(t-1) + 1
}

// cleanCopy returns s without the stripped ranges, and the offset map.
func (c *injCollector) cleanCopy() (string, *injMap) {
	sort.Slice(c.strips, func(i, j int) bool { return c.strips[i][0] < c.strips[j][0] })
	var b strings.Builder
	b.Grow(len(c.s))
	m := &injMap{}
	from := 0
	for _, st := range c.strips {
		if st[0] < from {
			st[0] = from
		}
		if st[0] >= st[1] {
			continue
		}
		if st[0] > from {
			m.segs = append(m.segs, struct{ t, s int }{b.Len(), from})
			b.WriteString(c.s[from:st[0]])
		}
		from = st[1]
	}
	m.segs = append(m.segs, struct{ t, s int }{b.Len(), from})
	b.WriteString(c.s[from:])
	return b.String(), m
}

// ---- phrases ----

// injAnchor is a 6-byte window (compared with ASCII case folded) whose
// verifier decides whether the text around it is a marker.
type injAnchor struct {
	win    string
	verify injVerifier
}

type injVerifier uint8

const (
	injVIgnore injVerifier = iota
	injVNewInstructions
	injVYouAreNow
	injVSystem
	injVTurn
	injVRole
	injVInst
	injVURL
	injVContents
	injVPath
	injVReplicate
)

// injAnchors: every phrase matcher starts from one of these windows.
var injAnchors = func() []injAnchor {
	var as []injAnchor
	add := func(v injVerifier, wins ...string) {
		for _, w := range wins {
			if len(w) != 6 {
				panic("injection anchor must be 6 bytes: " + w)
			}
			as = append(as, injAnchor{win: w, verify: v})
		}
	}
	add(injVIgnore, "ignore", "disreg", "forget")
	add(injVNewInstructions, "instru")
	add(injVYouAreNow, "re now", "re\nnow", "re\tnow", "re\rnow")
	add(injVSystem, "system")
	add(injVTurn, "human:", "assist")
	add(injVRole, `"role"`, `'role'`, `\"role`)
	add(injVInst, "[inst]", "[/inst")
	add(injVURL, "https:", "http:/")
	add(injVContents, "conten")
	add(injVPath, "id_rsa", "id_dsa", "id_ecd", "id_ed2", "/etc/p", "/etc/s", ".netrc",
		".npmrc", ".pypir", ".git-c", ".aws/c", ".kube/", ".docke", "~/.ssh", "/.ssh/", "creden", ".pgpas")
	add(injVReplicate, "repeat", "includ", "append", "insert", "prepen", "replic", "propag",
		"duplic", "reprod", "copy t", "copy i", "add th", "add it", "paste ")
	return as
}()

// verify runs the verifier of an anchor found at at.
func (p *injPhrase) verify(v injVerifier, at int) {
	switch v {
	case injVIgnore:
		p.ignoreVerb(at)
	case injVNewInstructions:
		p.newInstructions(at)
	case injVYouAreNow:
		p.youAreNow(at)
	case injVSystem:
		p.systemWord(at)
	case injVTurn:
		p.turnMarker(at)
	case injVRole:
		p.roleJSON(at)
	case injVInst:
		p.instTag(at)
	case injVURL:
		p.urlTarget(at)
	case injVContents:
		p.contentsOf(at)
	case injVPath:
		p.sensitivePath(at)
	case injVReplicate:
		p.replicate(at)
	}
}

// The gram index: each folded 4-byte gram of each anchor window, at
// offsets 0..2, goes in the bucket its hash selects; injGramTab maps a
// hash to its bucket's number (0: no gram hashes there), so the scan's
// test is one byte load.
type injGramRef struct {
	gram        uint32
	anchor, off int
}

var (
	injGramTab     [1 << 16]uint8
	injGramBuckets = [][]injGramRef{nil}
)

func init() {
	for ai, a := range injAnchors {
		for q := 0; q <= 2; q++ {
			g := injFold4(a.win[q : q+4])
			h := injGramHash(g)
			if injGramTab[h] == 0 {
				if len(injGramBuckets) == 256 {
					panic("injection anchors: too many grams")
				}
				injGramTab[h] = uint8(len(injGramBuckets))
				injGramBuckets = append(injGramBuckets, nil)
			}
			b := injGramTab[h]
			injGramBuckets[b] = append(injGramBuckets[b], injGramRef{g, ai, q})
		}
	}
}

func injFold4(w string) uint32 { return binary.LittleEndian.Uint32([]byte(w)) | 0x20202020 }

func injGramHash(g uint32) uint32 { return (g * 0x9E3779B1) >> 16 }

// injPhrase matches phrases in text t (s, or a cleaned or decoded copy of
// it) and reports them in offsets of s.
type injPhrase struct {
	c       *injCollector
	t       string
	m       *injMap
	pathEnd int // the end of the last token sensitivePath judged
}

func (p *injPhrase) add(kind string, ts, te int) {
	p.c.add(kind, p.m.start(ts), p.m.end(te))
}

// scanPhrases matches the phrases in t (offsets mapped to s by m) and
// reports whether t has a byte >= 0x80.
func (c *injCollector) scanPhrases(t string, m *injMap) bool {
	p := &injPhrase{c: c, t: t, m: m}
	var acc uint64
	i := 0
	// Five samples, at 0 3 6 9 12, from 16 bytes; 15 bytes a step.
	for ; i+16 <= len(t) && !c.full(); i += 15 {
		r0 := binary.LittleEndian.Uint64([]byte(t[i : i+8]))
		r1 := binary.LittleEndian.Uint64([]byte(t[i+8 : i+16]))
		acc |= r0 | r1
		w0, w1 := r0|0x2020202020202020, r1|0x2020202020202020
		g0, g1, g2, g3, g4 := uint32(w0), uint32(w0>>24), uint32(w0>>48)|uint32(w1)<<16, uint32(w1>>8), uint32(w1>>32)
		b0, b1, b2, b3, b4 := injGramTab[injGramHash(g0)], injGramTab[injGramHash(g1)], injGramTab[injGramHash(g2)],
			injGramTab[injGramHash(g3)], injGramTab[injGramHash(g4)]
		if b0|b1|b2|b3|b4 == 0 {
			continue
		}
		p.candidates(i, g0, b0)
		p.candidates(i+3, g1, b1)
		p.candidates(i+6, g2, b2)
		p.candidates(i+9, g3, b3)
		p.candidates(i+12, g4, b4)
	}
	if c.full() {
		acc = 0x80 // stopped early: assume the rest has non-ASCII bytes
	}
	for j := i; j < len(t) && acc&0x8080808080808080 == 0; j++ {
		acc |= uint64(t[j])
	}
	for ; i+4 <= len(t) && !c.full(); i += 3 {
		g := binary.LittleEndian.Uint32([]byte(t[i:i+4])) | 0x20202020
		p.candidates(i, g, injGramTab[injGramHash(g)])
	}
	p.scanAngle()
	return acc&0x8080808080808080 != 0
}

// candidates verifies the anchors whose window, placed so that gram g (of
// bucket b) is at i, matches t.
func (p *injPhrase) candidates(i int, g uint32, b uint8) {
	if b == 0 {
		return
	}
	for _, ref := range injGramBuckets[b] {
		if ref.gram != g {
			continue
		}
		at := i - ref.off
		a := &injAnchors[ref.anchor]
		if at < 0 || at+6 > len(p.t) || !injFoldEq(p.t[at:at+6], a.win) {
			continue
		}
		p.verify(a.verify, at)
	}
}

// injFoldEq compares 6 bytes with ASCII letters case-folded.
func injFoldEq(a, w string) bool {
	for k := 0; k < len(w); k++ {
		x, y := a[k], w[k]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || y|0x20 < 'a' || y|0x20 > 'z' {
			return false
		}
	}
	return true
}

// ---- tokens ----

// injSpaceAt returns the length of the whitespace character at i, or 0.
func injSpaceAt(t string, i int) int {
	switch b := t[i]; {
	case b == ' ' || b >= '\t' && b <= '\r':
		return 1
	case b < 0x80:
		return 0
	}
	r, n := utf8.DecodeRuneInString(t[i:])
	if injUnicodeSpace(r) {
		return n
	}
	return 0
}

// injSpaceBefore returns the length of the whitespace character that ends
// at i, or 0.
func injSpaceBefore(t string, i int) int {
	switch b := t[i-1]; {
	case b == ' ' || b >= '\t' && b <= '\r':
		return 1
	case b < 0x80:
		return 0
	}
	r, n := utf8.DecodeLastRuneInString(t[:i])
	if injUnicodeSpace(r) {
		return n
	}
	return 0
}

func injUnicodeSpace(r rune) bool {
	return r == 0x85 || r == 0xA0 || r == 0x1680 || r >= 0x2000 && r <= 0x200A || r == 0x2028 ||
		r == 0x2029 || r == 0x202F || r == 0x205F || r == 0x3000
}

// injMaxTok bounds the length of a token the matchers look at.
const injMaxTok = 512

// nextTok returns the token (a run of non-blank bytes) at or after i, and
// how many newlines the blanks before it held.
func (p *injPhrase) nextTok(i int) (ts, te, newlines int) {
	t := p.t
	for i < len(t) {
		n := 1
		if b := t[i]; b == '\n' {
			newlines++
		} else if b != ' ' && (b < '\t' || b > '\r') && (b < 0x80 || injSpaceAt(t, i) == 0) {
			break
		} else if b >= 0x80 {
			n = injSpaceAt(t, i)
		}
		i += n
	}
	ts = i
	for i < len(t) && i-ts < injMaxTok {
		if b := t[i]; b == ' ' || b >= '\t' && b <= '\r' || b >= 0x80 && injSpaceAt(t, i) != 0 {
			break
		}
		i++
	}
	return ts, i, newlines
}

// prevTok returns the token that ends at or before i.
func (p *injPhrase) prevTok(i int) (ts, te, newlines int) {
	t := p.t
	for i > 0 {
		n := injSpaceBefore(t, i)
		if n == 0 {
			break
		}
		if t[i-1] == '\n' {
			newlines++
		}
		i -= n
	}
	te = i
	for i > 0 && te-i < injMaxTok && injSpaceBefore(t, i) == 0 {
		i--
	}
	return i, te, newlines
}

// Byte classes of the punctuation around words.
var (
	injLeadPunct  = injByteSet("\"'([{<*_~`")
	injTrailPunct = injByteSet("\"')]}>*_~`.,;:!?")
	injClosePunct = injByteSet("\"')]}*_`")
	injEndPunct   = injByteSet(".!?;")
)

func injByteSet(chars string) (set [256]bool) {
	for i := 0; i < len(chars); i++ {
		set[chars[i]] = true
	}
	return set
}

// word trims the punctuation around a token: quotes, brackets, emphasis,
// sentence punctuation.
func (p *injPhrase) word(ts, te int) (int, int) {
	t := p.t
	for ts < te {
		if injLeadPunct[t[ts]] {
			ts++
		} else if t[ts] == 0xE2 && (strings.HasPrefix(t[ts:te], "“") || strings.HasPrefix(t[ts:te], "‘")) {
			ts += 3
		} else {
			break
		}
	}
	for te > ts {
		if injTrailPunct[t[te-1]] {
			te--
		} else if t[te-1] >= 0x80 && (strings.HasSuffix(t[ts:te], "”") || strings.HasSuffix(t[ts:te], "’") || strings.HasSuffix(t[ts:te], "…")) {
			te -= 3
		} else {
			break
		}
	}
	return ts, te
}

// endsSentence reports a token whose last character (before closing
// quotes and brackets) ends a sentence or clause.
func (p *injPhrase) endsSentence(ts, te int) bool {
	t := p.t
	for te > ts && injClosePunct[t[te-1]] {
		te--
	}
	return te > ts && (injEndPunct[t[te-1]] || t[te-1] == 0xA6 && strings.HasSuffix(t[ts:te], "…"))
}

// wordStartAt reports whether a word starts at i (no letter or digit
// before it).
func (p *injPhrase) wordStartAt(i int) bool {
	if i == 0 {
		return true
	}
	r := injPrevRune(p.t, i)
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 0x7F && r != utf8.RuneError && !injUnicodeSpace(r) && !injPunct(r))
}

func injPunct(r rune) bool {
	return r >= 0x2010 && r <= 0x205E || r == 0xAB || r == 0xBB
}

// ---- word classes ----

// injSet is a set of word classes; injWords maps each lower-case word the
// matchers know to its classes, so a token costs one lookup.
type injSet uint64

const (
	injIgnoreVerb      injSet = 1 << iota // ignore disregard forget
	injIgnoreNoun                         // instructions prompt rules ...
	injIgnoreStrong                       // all previous your system ...
	injIgnoreWeak                         // the of my this ...
	injIgnorePos                          // above previous before ... (may end the phrase)
	injClauseJoin                         // and then now instead
	injNewInstr                           // new updated revised ... (+ instructions:)
	injYouNowIs                           // dan jailbroken unrestricted ...
	injModeWord                           // developer god debug ... (+ mode)
	injNoLonger                           // bound restricted ... (no longer ...)
	injFreeOf                             // restrictions rules ... (free of ...)
	injArticle                            // a an the my our
	injPersona                            // ai assistant chatbot model ...
	injSysQual                            // warning message notice ... (SYSTEM WARNING:)
	injSysTagQual                         // message prompt reminder ... (<system_message>)
	injShout                              // important urgent ... (IMPORTANT SYSTEM MESSAGE:)
	injAngleTag                           // important developer start_of_turn ... (<important>)
	injExfilVerb                          // send post upload ...
	injNegation                           // never not don't ...
	injSensitive                          // contents secrets credentials keys ... (what is sent)
	injSensitiveObj                       // credentials secrets passwords ... (contents of ...)
	injToward                             // to into at via ...
	injReplVerb                           // repeat include append ...
	injReplObj                            // this these following above ...
	injReplFiller                         // the message notice text ...
	injReplPrep                           // in into to at ...
	injReplQuant                          // every each all future ... the end of
	injReplQuantStrong                    // every each all any future subsequent later next
	injReplTarget                         // message reply response email file ...
)

// injWordTab is an open-addressing hash table (FNV-1a of the lower-case
// word, linear probing) of the words the matchers know and their classes:
// a lookup costs a few nanoseconds, a Go map with a string key several
// times that.
var injWordTab = func() *[1024]injWordEntry {
	m := map[string]injSet{}
	add := func(set injSet, words ...string) {
		for _, w := range words {
			m[w] |= set
		}
	}
	add(injIgnoreVerb, "ignore", "disregard", "forget")
	add(injIgnoreNoun, "instructions", "instruction", "prompt", "prompts", "directives", "directive",
		"guidelines", "guidance", "guardrails", "programming", "rules", "commands", "context",
		"directions", "training", "constraints", "restrictions", "orders", "policies", "messages")
	// A qualifier that points back at the instructions in force (the
	// brief's "(previous|prior|above)", and "your", "system", ...) is
	// required: "ignore all rules" in a linter's documentation is not one.
	add(injIgnoreStrong, "previous", "prior", "above", "earlier", "preceding", "foregoing", "former",
		"original", "initial", "system", "your", "developer", "safety", "existing", "preexisting",
		"pre-existing", "old", "everything", "ethical", "content", "aforementioned", "above-mentioned")
	add(injIgnoreWeak, "of", "the", "my", "this", "that", "its", "current", "given", "default",
		"and", "other", "said", "entire", "whole", "all", "any", "every", "these", "those")
	add(injIgnorePos, "above", "previous", "prior", "before", "earlier", "preceding", "foregoing", "everything")
	add(injClauseJoin, "and", "then", "now", "instead", "&")
	add(injNewInstr, "new", "updated", "revised", "real", "actual", "true", "secret", "hidden", "important",
		"additional", "override", "overriding", "admin", "priority", "urgent", "latest", "changed", "different",
		"special", "critical", "mandatory", "system", "official", "correct")
	add(injYouNowIs, "dan", "jailbroken", "unrestricted", "unfiltered", "uncensored", "unlocked", "unchained",
		"evil", "rogue", "unbound", "liberated", "limitless", "unshackled", "amoral")
	add(injModeWord, "developer", "dev", "god", "jailbreak", "jailbroken", "unrestricted", "debug",
		"admin", "sudo", "dan", "root", "unfiltered", "uncensored", "evil", "chaos", "override")
	add(injNoLonger, "bound", "restricted", "limited", "constrained", "required", "subject", "an", "a",
		"chatgpt", "claude", "gpt", "assistant", "following", "obligated", "governed", "censored", "filtered")
	add(injFreeOf, "restrictions", "rules", "guidelines", "constraints", "filters", "limitations",
		"censorship", "limits", "policies", "guardrails", "programming")
	add(injArticle, "a", "an", "the", "my", "our")
	add(injPersona, "ai", "assistant", "chatbot", "bot", "model", "agent", "persona", "character", "llm",
		"dan", "hacker", "jailbreak", "gpt", "chatgpt", "claude")
	// Not error, info, event, ...: "System error: disk full" is a log line.
	add(injSysQual, "warning", "message", "notice", "override", "prompt", "alert", "instruction",
		"instructions", "update", "note", "administrator", "admin", "directive", "command",
		"notification", "announcement", "reminder", "msg", "priority", "operator", "context")
	// Not error, clock, ...: <system_error> is a C++ header.
	add(injSysTagQual, "message", "prompt", "instruction", "instructions", "reminder", "note",
		"notice", "warning", "override", "directive", "context", "msg", "alert", "update")
	add(injShout, "important", "urgent", "critical", "new", "official", "priority", "admin", "mandatory",
		"automated", "internal")
	add(injAngleTag, "important", "developer", "developer_message", "developer-message",
		"developer_instructions", "start_of_turn", "end_of_turn", "sys", "admin_instructions")
	add(injExfilVerb, "send", "post", "upload", "forward", "transmit", "exfiltrate", "exfil", "leak",
		"email", "e-mail", "mail", "paste", "share", "submit", "deliver", "put", "dump", "publish", "beam", "relay")
	add(injNegation, "never", "not", "don't", "dont", "don’t", "cannot", "can't", "won't", "shouldn't",
		"mustn't", "avoid", "without", "refuse", "no")
	add(injSensitive, "contents", "content", "secrets", "secret", "credentials", "credential", "keys",
		"key", "apikey", "apikeys", "tokens", "token", "passwords", "password", "passwd", "env", "environment",
		"variables", "vars", "cookies", "cookie", "conversation", "conversations", "history", "chat", "messages",
		"emails", "everything", "ssh", "session", "sessions", "prompt", "private", "api_key", "api_keys")
	add(injSensitiveObj, "credentials", "secrets", "passwords", "keys", "tokens", "cookies", "credential",
		"keychain", "wallet", "vault")
	add(injToward, "to", "into", "at", "via", "onto", "toward", "towards", "on")
	add(injReplVerb, "repeat", "include", "append", "insert", "prepend", "replicate", "propagate",
		"duplicate", "reproduce", "copy", "add", "paste")
	add(injReplObj, "this", "these", "following", "above", "same", "it", "exact", "verbatim")
	add(injReplFiller, "the", "a", "an", "exact", "entire", "whole", "full", "same", "following",
		"above", "message", "notice", "text", "instruction", "instructions", "note", "paragraph", "block",
		"line", "lines", "prompt", "sentence", "string", "signature", "footer", "header", "content",
		"statement", "disclaimer", "warning", "request", "section", "part", "it", "this", "these", "verbatim",
		"exactly", "word-for-word", "unchanged", "as-is", "too", "also")
	add(injReplPrep, "in", "into", "to", "at", "on", "onto", "with", "throughout", "across", "within", "inside")
	add(injReplQuant, "every", "each", "all", "any", "future", "subsequent", "following",
		"later", "other", "your", "of", "single", "the", "end", "start", "beginning", "top", "bottom",
		"footer", "header", "signature", "next")
	add(injReplQuantStrong, "every", "each", "all", "any", "future", "subsequent", "later", "next")
	add(injReplTarget, "message", "messages", "reply", "replies", "response", "responses", "answer",
		"answers", "email", "emails", "e-mail", "e-mails", "file", "files", "output", "outputs", "document",
		"documents", "commit", "commits", "comment", "comments", "post", "posts", "chat", "chats",
		"conversation", "conversations", "turn", "turns", "completion", "completions", "note", "notes")
	var tab [1024]injWordEntry
	for w, set := range m {
		if len(w) > injMaxWord || len(m) > len(tab)/2 {
			panic("injection word table: " + w)
		}
		k := injWordHash(w) & uint32(len(tab)-1)
		for tab[k].key != "" {
			k = (k + 1) & uint32(len(tab)-1)
		}
		tab[k] = injWordEntry{w, set}
	}
	return &tab
}()

type injWordEntry struct {
	key string
	set injSet
}

const injMaxWord = 24

func injWordHash(w string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(w); i++ {
		b := w[i]
		if b-'A' < 26 {
			b += 'a' - 'A'
		}
		h = (h ^ uint32(b)) * 16777619
	}
	return h
}

// injClass returns the classes of word w (ASCII letters compared without
// case).
func injClass(w string) injSet {
	if len(w) == 0 || len(w) > injMaxWord {
		return 0
	}
	for k := injWordHash(w) & uint32(len(injWordTab)-1); ; k = (k + 1) & uint32(len(injWordTab)-1) {
		e := &injWordTab[k]
		if e.key == "" {
			return 0
		}
		if len(e.key) == len(w) && injEqualLower(w, e.key) {
			return e.set
		}
	}
}

// injEqualLower compares w, ASCII letters folded to lower case, with the
// lower-case key.
func injEqualLower(w, key string) bool {
	for i := 0; i < len(w); i++ {
		b := w[i]
		if b-'A' < 26 {
			b += 'a' - 'A'
		}
		if b != key[i] {
			return false
		}
	}
	return true
}

// wordClass trims the token and returns the word's bounds and classes.
func (p *injPhrase) wordClass(ts, te int) (int, int, injSet) {
	w0, w1 := p.word(ts, te)
	return w0, w1, injClass(p.t[w0:w1])
}

// ---- ignore_instructions ----

// ignoreVerb: ignore|disregard|forget + qualifiers + (instructions|...),
// with at least one strong qualifier (all, previous, your, ...); or the
// qualifiers ending in a position word at a clause end ("disregard the
// above.", "forget everything above and ...").
func (p *injPhrase) ignoreVerb(at int) {
	t := p.t
	e := at
	for e < len(t) && (t[e]|0x20 >= 'a' && t[e]|0x20 <= 'z') {
		e++
	}
	if n := e - at; n != 6 && n != 9 || !p.wordStartAt(at) { // ignore, forget, disregard
		return
	}
	ts, te, _ := p.nextTok(at)
	ws, we, c := p.wordClass(ts, te)
	if ws != at || c&injIgnoreVerb == 0 {
		return
	}
	strong, lastPos := false, false
	end := we
	for k, i := 0, te; k < 8; k++ {
		ts, te, nl := p.nextTok(i)
		if ts == te || nl >= 2 {
			if lastPos { // the end of the text or of a paragraph
				p.add(InjectionKindIgnoreInstructions, at, end)
			}
			return
		}
		w0, w1, c := p.wordClass(ts, te)
		switch {
		case w0 == w1:
			return
		case c&injIgnoreNoun != 0:
			if strong {
				p.add(InjectionKindIgnoreInstructions, at, w1)
			}
			return
		case lastPos && c&injClauseJoin != 0:
			p.add(InjectionKindIgnoreInstructions, at, end)
			return
		case c&injIgnoreStrong != 0:
			strong = true
		case c&injIgnoreWeak != 0:
		default:
			return
		}
		lastPos = c&injIgnorePos != 0
		end = w1
		if p.endsSentence(ts, te) || w1 < te && p.t[w1] == ',' {
			if lastPos {
				p.add(InjectionKindIgnoreInstructions, at, end)
			}
			return
		}
		i = te
	}
}

// newInstructions: "(new|updated|real|...) instructions:".
func (p *injPhrase) newInstructions(at int) {
	t := p.t
	e := at
	for e < len(t) && t[e]|0x20 >= 'a' && t[e]|0x20 <= 'z' {
		e++
	}
	for e < len(t) && e < at+16 && (t[e] == '*' || t[e] == ' ') {
		e++
	}
	if e >= len(t) || t[e] != ':' || !p.wordStartAt(at) {
		return // quick rejection: no colon after the word
	}
	ts, te, _ := p.nextTok(at)
	ws, we := p.word(ts, te)
	if ws != at || we-ws < 11 || we-ws > 12 || !strings.EqualFold(t[ws:ws+11], "instruction") {
		return
	}
	colon := we
	if colon < len(t) && t[colon] == '*' {
		colon++
	}
	for colon < len(t) && colon < we+3 && t[colon] == ' ' {
		colon++
	}
	if colon >= len(t) || t[colon] != ':' {
		return
	}
	ps, pe, nl := p.prevTok(at)
	if nl > 0 {
		return
	}
	w0, _, c := p.wordClass(ps, pe)
	if c&injNewInstr == 0 {
		return
	}
	// The qualifier starts a sentence or line, or is capitalised ("New
	// instructions:"); "the following new instructions:" in a CPU manual
	// is not a marker.
	bs, be, bnl := p.prevTok(ps)
	if bs == be || bnl > 0 || p.endsSentence(bs, be) || t[be-1] == ':' || t[w0] >= 'A' && t[w0] <= 'Z' {
		p.add(InjectionKindIgnoreInstructions, w0, colon+1)
	}
}

// youAreNow: "you are now" / "you're now" + a new identity or mode: DAN,
// jailbroken, unrestricted, "in developer mode", "no longer bound", "free
// of all restrictions", "a/an/the … AI|assistant|model|chatbot|…".
func (p *injPhrase) youAreNow(at int) {
	t := p.t
	// at is at "re" of "are" or "'re"; "now" starts at at+3.
	var youEnd int
	switch {
	case at >= 1 && (t[at-1] == 'a' || t[at-1] == 'A'):
		j := at - 1
		n := 0
		for j > 0 {
			k := injSpaceBefore(t, j)
			if k == 0 {
				break
			}
			j -= k
			n++
		}
		if n == 0 {
			return
		}
		youEnd = j
	case at >= 1 && t[at-1] == '\'':
		youEnd = at - 1
	case at >= 3 && t[at-3:at] == "’":
		youEnd = at - 3
	default:
		return
	}
	if youEnd < 3 || !strings.EqualFold(t[youEnd-3:youEnd], "you") || !p.wordStartAt(youEnd-3) {
		return
	}
	start := youEnd - 3
	nowEnd := at + 6
	if nowEnd < len(t) && (t[nowEnd] >= 'a' && t[nowEnd] <= 'z' || t[nowEnd] >= 'A' && t[nowEnd] <= 'Z') {
		return // "you are nowhere"
	}
	var words [6][2]int
	var cls [6]injSet
	n := 0
	for i := nowEnd; n < len(words); {
		ts, te, nl := p.nextTok(i)
		if ts == te || nl >= 2 {
			break
		}
		w0, w1, c := p.wordClass(ts, te)
		words[n], cls[n] = [2]int{w0, w1}, c
		n++
		i = te
		if p.endsSentence(ts, te) {
			break
		}
	}
	is := func(k int, set injSet) bool { return k < n && cls[k]&set != 0 }
	word := func(k int) string {
		if k >= n {
			return ""
		}
		return t[words[k][0]:words[k][1]]
	}
	end := func(k int) { p.add(InjectionKindIgnoreInstructions, start, words[k][1]) }
	switch first := word(0); {
	case is(0, injYouNowIs):
		end(0)
	case strings.EqualFold(first, "in") || strings.EqualFold(first, "operating") || strings.EqualFold(first, "running"):
		for k := 1; k < n && k <= 3; k++ {
			if strings.EqualFold(word(k), "mode") {
				if is(k-1, injModeWord) {
					end(k)
				}
				return
			}
		}
	case strings.EqualFold(first, "no") && strings.EqualFold(word(1), "longer"):
		if is(2, injNoLonger) {
			end(2)
		}
	case strings.EqualFold(first, "free") && (strings.EqualFold(word(1), "of") || strings.EqualFold(word(1), "from")):
		for k := 2; k < n && k <= 4; k++ {
			if is(k, injFreeOf) {
				end(k)
				return
			}
		}
	case is(0, injArticle):
		for k := 1; k < n && k <= 4; k++ {
			if is(k, injPersona) {
				end(k)
				return
			}
		}
	}
}

// ---- fake_system_message ----

// systemWord: "system" posing as a turn or frame.
//   - [SYSTEM], [system message], [SYSTEM NOTE: ...] (not a Markdown link)
//   - <system>, </system>, <system_message attr="...">, <|system|>
//   - at a line start (after blanks and Markdown # > * - decoration):
//     System:, SYSTEM WARNING:, ### System Message:, **SYSTEM:** (not a
//     lower-case YAML key "system:")
//   - within a line after a sentence, quote or bracket boundary, with a
//     qualifier (". System Warning: ...") or in capitals (SYSTEM:).
func (p *injPhrase) systemWord(at int) {
	t := p.t
	// Quick rejection of "system" in prose: no frame opens before it and
	// no colon follows on its line within a qualifier's reach.
	b := at
	for b > 0 && t[b-1] == ' ' {
		b--
	}
	frame := b > 0 && (t[b-1] == '[' || t[b-1] == '<') || b >= 2 && (t[b-2:b] == "</" || t[b-2:b] == "<|")
	if !frame {
		k := at + 6
		for k < len(t) && k < at+6+32 && t[k] != ':' && t[k] != '\n' {
			k++
		}
		if k >= len(t) || t[k] != ':' {
			return
		}
	}
	if !p.wordStartAt(at) && !(at > 0 && (t[at-1] == '_' || t[at-1] == '|')) {
		return
	}
	j := at + 6
	if j < len(t) && (t[j] >= 'a' && t[j] <= 'z' || t[j] >= 'A' && t[j] <= 'Z') {
		return // "systems", "systematic"
	}
	// Optional qualifier: _message, -prompt, " WARNING".
	qual, tagQual := false, false
	if j < len(t) && (t[j] == '_' || t[j] == '-' || t[j] == ' ') {
		k := j + 1
		e := k
		for e < len(t) && e < k+16 && (t[e] >= 'a' && t[e] <= 'z' || t[e] >= 'A' && t[e] <= 'Z') {
			e++
		}
		if c := injClass(t[k:e]); c&injSysQual != 0 {
			j, qual = e, true
			tagQual = c&injSysTagQual != 0
		}
	}
	// Before the word: '[' or '<' frames.
	if b > 0 {
		switch {
		case t[b-1] == '[' && b >= 2 && injIdentByte(t[b-2]):
			return // an index expression: numSysData[system]
		case t[b-1] == '[':
			// [SYSTEM], [system message], [SYSTEM NOTE: ...]; not a
			// Markdown link or reference ([System](#system)).
			e := j
			for e < len(t) && e < j+200 && t[e] != ']' && t[e] != '\n' {
				e++
			}
			if e < len(t) && t[e] == ']' && (e == j || t[j] == ':') &&
				!(e+1 < len(t) && (t[e+1] == '(' || t[e+1] == '[')) && !strings.HasPrefix(t[e+1:], ": http") {
				p.add(InjectionKindFakeSystem, b-1, e+1)
			}
			return
		case t[b-1] == '<' && b >= 2 && injIdentByte(t[b-2]):
			return // a type argument: List<System>
		case t[b-1] == '<' || b >= 2 && t[b-2:b] == "</" || b >= 2 && t[b-2:b] == "<|":
			open := b - 1
			if t[b-1] != '<' {
				open = b - 2
			}
			e := j
			if qual && !tagQual {
				return // <system_error>: not one of ours
			}
			if e < len(t) && (t[e] == ' ' || t[e] == '\t') {
				for e < len(t) && e < j+200 && t[e] != '>' && t[e] != '<' && t[e] != '\n' {
					e++
				}
			}
			switch {
			case e+1 < len(t) && t[e] == '|' && t[e+1] == '>':
				p.add(InjectionKindFakeSystem, open, e+2)
			case e < len(t) && t[e] == '>':
				p.add(InjectionKindFakeSystem, open, e+1)
			case e+1 < len(t) && t[e] == '/' && t[e+1] == '>':
				p.add(InjectionKindFakeSystem, open, e+2)
			}
			return
		}
	}
	// A colon after the word (and qualifier), past bold markers.
	colon := j
	for colon < len(t) && colon < j+4 && (t[colon] == '*' || t[colon] == '_' || t[colon] == ' ') {
		colon++
	}
	if colon >= len(t) || t[colon] != ':' {
		return
	}
	end := colon + 1
	for end < len(t) && end < colon+3 && (t[end] == '*' || t[end] == '_') {
		end++
	}
	if p.atLineStart(at) {
		// "system:" in lower case without a qualifier is a YAML key, and a
		// bare "System:" followed by code a struct field.
		if qual || t[at:at+6] == "SYSTEM" || t[at] == 'S' && p.proseAfter(end, 2) {
			p.add(InjectionKindFakeSystem, p.lineDecorStart(at), end)
		}
		return
	}
	// Within a line: capitalised, after a boundary (sentence end, quote,
	// bracket, dash) or a shouting word (IMPORTANT SYSTEM MESSAGE:).
	upper := t[at:at+6] == "SYSTEM"
	if t[at] != 'S' || !qual && !upper {
		return
	}
	ps, pe, _ := p.prevTok(at)
	boundary := ps == pe
	if !boundary {
		boundary = strings.IndexByte(".!?:;\"')]}>-*#|`", t[pe-1]) >= 0
		if w0, _, c := p.wordClass(ps, pe); !boundary && c&injShout != 0 {
			boundary = upper || t[w0] >= 'A' && t[w0] <= 'Z'
			if boundary {
				at = w0
			}
		}
	}
	if boundary {
		p.add(InjectionKindFakeSystem, at, end)
	}
}

// injIdentByte: a byte that can end an identifier or expression.
func injIdentByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == ')' || b == ']'
}

// proseAfter reports whether the rest of the line after i reads as text
// rather than code: it is empty (the marker stands on its own line), or
// holds at least minWords words and does not end like an expression
// (, { ( [ ;): "System: r.readStats()," is a struct field, "System: Linux"
// a line of system information.
func (p *injPhrase) proseAfter(i, minWords int) bool {
	t := p.t
	e := i
	for e < len(t) && e < i+200 && t[e] != '\n' {
		e++
	}
	line := strings.TrimSpace(t[i:e])
	if line == "" {
		return true
	}
	if strings.IndexByte(",{([;", line[len(line)-1]) >= 0 {
		return false
	}
	return minWords < 2 || strings.IndexAny(line, " \t") > 0
}

// atLineStart reports whether only blanks and Markdown decoration (# > *
// - _ = | [ () stand between the last newline and i.
func (p *injPhrase) atLineStart(i int) bool {
	t := p.t
	for j := i - 1; j >= 0 && j >= i-16; j-- {
		switch t[j] {
		case '\n', '\r':
			return true
		case ' ', '\t', '#', '>', '*', '-', '_', '=', '|', '[', '(':
		default:
			return false
		}
		if j == 0 {
			return true
		}
	}
	return i == 0
}

// lineDecorStart returns where the Markdown decoration before i starts.
func (p *injPhrase) lineDecorStart(i int) int {
	t := p.t
	j := i
	for j > 0 && strings.IndexByte("#>*-_=|[( \t", t[j-1]) >= 0 {
		j--
	}
	for j < i && (t[j] == ' ' || t[j] == '\t') {
		j++
	}
	return j
}

// turnMarker: "Human:" / "Assistant:" (capitalised) at a line start, the
// turn markers of the chat transcripts models are trained on.
func (p *injPhrase) turnMarker(at int) {
	t := p.t
	var e int
	switch {
	case strings.EqualFold(t[at:at+6], "human:"):
		e = at + 6
	case at+10 <= len(t) && strings.EqualFold(t[at:at+10], "assistant:"):
		e = at + 10
	default:
		return
	}
	if t[at] >= 'A' && t[at] <= 'Z' && p.atLineStart(at) && p.wordStartAt(at) && p.proseAfter(e, 1) {
		p.add(InjectionKindFakeSystem, p.lineDecorStart(at), e)
	}
}

// roleJSON: "role": "system" | "developer" (also single-quoted, or
// escaped inside a JSON string: \"role\":\"system\").
func (p *injPhrase) roleJSON(at int) {
	t := p.t
	j := at
	esc := t[j] == '\\'
	if esc {
		j++
	}
	q := t[j]
	quote := func(j int) (int, bool) {
		if esc {
			return j + 2, strings.HasPrefix(t[j:], `\"`)
		}
		return j + 1, j < len(t) && t[j] == q
	}
	j++
	if j+4 > len(t) || !strings.EqualFold(t[j:j+4], "role") {
		return
	}
	j, ok := quote(j + 4)
	if !ok {
		return
	}
	for j < len(t) && (t[j] == ' ' || t[j] == '\t') {
		j++
	}
	if j >= len(t) || t[j] != ':' {
		return
	}
	j++
	for j < len(t) && (t[j] == ' ' || t[j] == '\t') {
		j++
	}
	if j, ok = quote(j); !ok {
		return
	}
	for _, role := range []string{"system", "developer"} {
		if j+len(role) <= len(t) && strings.EqualFold(t[j:j+len(role)], role) {
			// A chat message has its text beside the role: "content"
			// (OpenAI, Anthropic) or "parts" (Gemini). {"user": "alice",
			// "role": "developer"} is access-control data.
			e, ok := quote(j + len(role))
			if ok && p.chatMessageNear(at, e) {
				p.add(InjectionKindFakeSystem, at, e)
			}
			return
		}
	}
}

// chatMessageNear reports a quoted "content" or "parts" key within 300
// bytes of the role member [at, e).
func (p *injPhrase) chatMessageNear(at, e int) bool {
	t := p.t
	lo, hi := max(0, at-300), min(len(t), e+300)
	for _, k := range []string{"content", "parts"} {
		for _, w := range []string{t[lo:at], t[e:hi]} {
			for off := 0; ; {
				i := strings.Index(w[off:], k)
				if i < 0 {
					break
				}
				i += off
				if i > 0 && i+len(k) < len(w) && (w[i-1] == '"' || w[i-1] == '\'') &&
					(w[i+len(k)] == '"' || w[i+len(k)] == '\'' || w[i+len(k)] == '\\') {
					return true
				}
				off = i + 1
			}
		}
	}
	return false
}

// instTag: Llama's [INST] and [/INST].
func (p *injPhrase) instTag(at int) {
	t := p.t
	if strings.EqualFold(t[at:at+6], "[inst]") {
		p.add(InjectionKindFakeSystem, at, at+6)
	} else if at+7 <= len(t) && strings.EqualFold(t[at:at+7], "[/inst]") {
		p.add(InjectionKindFakeSystem, at, at+7)
	}
}

// scanAngle visits every '<' for chat-template frames: <|name|> special
// tokens, <<SYS>>, and the tags <important>, <developer…>,
// <start_of_turn>, <end_of_turn> (<system…> is the "system" anchor's).
func (p *injPhrase) scanAngle() {
	t := p.t
	for off := 0; off < len(t) && !p.c.full(); {
		k := strings.IndexByte(t[off:], '<')
		if k < 0 {
			return
		}
		i := off + k
		off = i + 1
		if i+1 >= len(t) {
			return
		}
		switch {
		case t[i+1] == '|':
			e := i + 2
			for e < len(t) && e < i+2+32 && (t[e] >= 'a' && t[e] <= 'z' || t[e] >= 'A' && t[e] <= 'Z' || t[e] >= '0' && t[e] <= '9' || t[e] == '_') {
				e++
			}
			if e-(i+2) >= 2 && e+1 < len(t) && t[e] == '|' && t[e+1] == '>' {
				p.add(InjectionKindFakeSystem, i, e+2)
				off = e + 2
			}
		case strings.HasPrefix(t[i:], "<<SYS>>") || strings.HasPrefix(t[i:], "<</SYS>>"):
			e := i + 7
			if t[i+2] == '/' {
				e++
			}
			p.add(InjectionKindFakeSystem, i, e)
			off = e
		default:
			j := i + 1
			if t[j] == '/' {
				j++
			}
			e := j
			for e < len(t) && e < j+24 && (t[e] >= 'a' && t[e] <= 'z' || t[e] >= 'A' && t[e] <= 'Z' || t[e] == '_' || t[e] == '-') {
				e++
			}
			if e == j || injClass(t[j:e])&injAngleTag == 0 {
				continue
			}
			g := e
			if g < len(t) && t[g] == ' ' {
				for g < len(t) && g < e+200 && t[g] != '>' && t[g] != '<' && t[g] != '\n' {
					g++
				}
			}
			if g < len(t) && t[g] == '>' {
				p.add(InjectionKindFakeSystem, i, g+1)
				off = g + 1
			}
		}
	}
}

// ---- exfiltration_request ----

// sensitivePathTok reports a token naming a credential file.
func (p *injPhrase) sensitivePathTok(ts, te int) bool {
	w0, w1 := p.word(ts, te)
	if w1-w0 < 4 || w1-w0 > 256 {
		return false
	}
	// Every name below holds a '.', a '/' or an '_'.
	if tok := p.t[w0:w1]; strings.IndexByte(tok, '.') < 0 && strings.IndexByte(tok, '/') < 0 && strings.IndexByte(tok, '_') < 0 {
		return false
	}
	var buf [256]byte
	for i := w0; i < w1; i++ {
		b := p.t[i]
		if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		buf[i-w0] = b
	}
	w := string(buf[:w1-w0])
	if w == ".env" || strings.HasPrefix(w, ".env.") || strings.HasPrefix(w, ".env_") || strings.Contains(w, "/.env") {
		return true
	}
	for _, x := range []string{".ssh", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".aws/credentials",
		"/etc/passwd", "/etc/shadow", ".netrc", ".npmrc", ".pypirc", ".git-credentials", ".kube/config",
		".docker/config.json", "credentials.json", "secrets.json", "secrets.yaml", "secrets.yml", ".pgpass"} {
		if strings.Contains(w, x) {
			return true
		}
	}
	return false
}

// exfilVerbBefore looks back from i over at most n tokens of the same
// sentence for a sending verb that is not negated. It returns the verb's
// start, and whether a sensitive word or path stood between it and i.
func (p *injPhrase) exfilVerbBefore(i, n int) (verb int, sensitive bool, ok bool) {
	for k := 0; k < n; k++ {
		ts, te, nl := p.prevTok(i)
		if ts == te || nl >= 2 || p.endsSentence(ts, te) {
			return 0, false, false
		}
		w0, _, c := p.wordClass(ts, te)
		if c&injExfilVerb != 0 {
			// Negated ("never send …", "do not post …")?
			j := ts
			for m := 0; m < 2; m++ {
				ns, ne, _ := p.prevTok(j)
				if ns == ne {
					break
				}
				if _, _, c := p.wordClass(ns, ne); c&injNegation != 0 {
					return 0, false, false
				}
				j = ns
			}
			return w0, sensitive, true
		}
		if !sensitive && (c&injSensitive != 0 || p.sensitivePathTok(ts, te)) {
			sensitive = true
		}
		i = ts
	}
	return 0, false, false
}

// urlTarget: VERB … (secret-ish object) … to|into|at|via https://….
func (p *injPhrase) urlTarget(at int) {
	t := p.t
	ts := at
	for ts > 0 && at-ts < 4 && injSpaceBefore(t, ts) == 0 {
		ts-- // "<https://…>", "(https://…)"
	}
	if ts > 0 && injSpaceBefore(t, ts) == 0 {
		return // inside a longer token: url=https://…
	}
	_, te, _ := p.nextTok(at)
	_, ue := p.word(at, te)
	ps, pe, nl := p.prevTok(ts)
	if ps == pe || nl >= 2 {
		return
	}
	if _, _, c := p.wordClass(ps, pe); c&injToward == 0 {
		return
	}
	if verb, sensitive, ok := p.exfilVerbBefore(ps, 14); ok && sensitive {
		p.add(InjectionKindExfiltration, verb, ue)
	}
}

// contentsOf: VERB … (the) contents of <credential file or secret-ish
// word>.
func (p *injPhrase) contentsOf(at int) {
	t := p.t
	e := at
	for e < len(t) && t[e]|0x20 >= 'a' && t[e]|0x20 <= 'z' {
		e++
	}
	f := e
	for f < len(t) && f < e+4 && (t[f] == ' ' || t[f] == '\t' || t[f] == '\n') {
		f++
	}
	if n := e - at; n < 7 || n > 8 || f == e || f+2 > len(t) || t[f]|0x20 != 'o' || t[f+1]|0x20 != 'f' || !p.wordStartAt(at) {
		return // quick rejection: not "content(s) of"
	}
	ts, te, _ := p.nextTok(at)
	w0, w1 := p.word(ts, te)
	if w0 != at || !strings.EqualFold(p.t[w0:w1], "contents") && !strings.EqualFold(p.t[w0:w1], "content") {
		return
	}
	fs, fe, _ := p.nextTok(te)
	if a, b := p.word(fs, fe); !strings.EqualFold(p.t[a:b], "of") {
		return
	}
	i := fe
	for k := 0; k < 4; k++ {
		ns, ne, nl := p.nextTok(i)
		if ns == ne || nl >= 2 {
			return
		}
		_, b, c := p.wordClass(ns, ne)
		if c&injSensitiveObj != 0 || p.sensitivePathTok(ns, ne) {
			if verb, _, ok := p.exfilVerbBefore(ts, 6); ok {
				p.add(InjectionKindExfiltration, verb, b)
			}
			return
		}
		if p.endsSentence(ns, ne) {
			return
		}
		i = ne
	}
}

// sensitivePath: VERB … <credential file> (upload ~/.ssh/id_rsa).
func (p *injPhrase) sensitivePath(at int) {
	if at < p.pathEnd {
		return // another anchor in a token already judged
	}
	t := p.t
	ts, te := at, at
	for ts > 0 && injSpaceBefore(t, ts) == 0 && at-ts < injMaxTok {
		ts--
	}
	for te < len(t) && injSpaceAt(t, te) == 0 && te-at < injMaxTok {
		te++
	}
	p.pathEnd = te
	if !p.sensitivePathTok(ts, te) {
		return
	}
	if verb, _, ok := p.exfilVerbBefore(ts, 8); ok {
		_, e := p.word(ts, te)
		p.add(InjectionKindExfiltration, verb, e)
	}
}

// ---- self_replication ----

// replicate: VERB this|these|the following|the above [message|notice|…]
// in|into|to … every|each|all (future) message|reply|file|email|….
func (p *injPhrase) replicate(at int) {
	if !p.wordStartAt(at) {
		return
	}
	ts, te, _ := p.nextTok(at)
	w0, _, c := p.wordClass(ts, te)
	if w0 != at || c&injReplVerb == 0 {
		return
	}
	object, prep, quant := false, false, false
	i := te
	for k := 0; k < 14; k++ {
		ns, ne, nl := p.nextTok(i)
		if ns == ne || nl >= 2 {
			return
		}
		_, b, c := p.wordClass(ns, ne)
		switch {
		case !prep && c&injReplObj != 0:
			object = true
		case !prep && object && c&injReplPrep != 0:
			prep = true
		case !prep && !object && k >= 2:
			return // the object comes first: "include this", "add the following"
		case !prep && c&injReplFiller != 0:
		case prep && c&(injReplQuant|injReplPrep) != 0:
			quant = quant || c&injReplQuantStrong != 0
		case prep && quant && c&injReplTarget != 0:
			p.add(InjectionKindSelfReplication, at, b)
			return
		default:
			return
		}
		if p.endsSentence(ns, ne) {
			return
		}
		i = ne
	}
}
