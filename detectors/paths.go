package detectors

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// The paths detector.
//
// What counts as a path in a string s (the value of property field):
//
//   - the whole value (surrounding white space trimmed) of a path-ish field
//     (see isPathField): absolute, home-relative or relative, so
//     "../../.env" and ".env.prod" count, and spaces in a name survive;
//   - every file: URL anywhere in s ("file:///etc/passwd",
//     "file://localhost/etc/passwd", "file:/etc/passwd"), percent-decoded
//     and cut at a NUL; for "file://host/p" both "/p" and "host/p";
//   - every word of s that starts with "/", "~/", "~user/", "$HOME/",
//     "${HOME}/", "./" or "../", where s is split twice: at white space,
//     quotes and the shell's operators (| ; & < > ( ) `), and as a POSIX shell
//     splits words (quotes removed, backslash escapes resolved), so
//     `cat "$HOME/Library/Application Support/x"` and `cat /etc/sh''adow`
//     count. The part after an "=" counts too (--file=/etc/shadow), and a
//     leading "@" is dropped (curl -d @/etc/passwd). A word that holds "://"
//     is a URL: its path is on another machine, not a local path.
//
// So "and/or", "1/2", "report.md" in prose and https://example.com/etc/passwd
// name no path; relative names count only in a path-ish field or when
// written "./x" or "../x".
//
// Normalization never touches the file system: "~" and "$HOME" expand to
// opts.Home (when set; "~user/" never does), then path.Clean resolves ".",
// ".." and repeated slashes lexically (symlinks are not followed; ".." above
// the root stays at the root). A relative path stays relative: it is
// resolved against nothing.
//
// Every glob of opts.ProtectedPaths (doublestar syntax: "*" and "?" within a
// segment, "**" across segments, "{a,b}", "[a-z]"; a leading "~/" expands to
// opts.Home) is matched against the normalized path, case-insensitively:
// macOS and Windows file systems ignore case by default, so "~/.SSH/ID_RSA"
// opens the same key there. "**/" matches any number of segments, ".."
// included, so "**/.env*" matches "/srv/app/.env.prod", ".env" and
// "../../.env"; an absolute glob never matches a relative path. A glob that
// is not valid doublestar syntax never matches (ValidateProtectedPath tells
// why).
//
// Not in scope: shell expansion other than "~" and $HOME (other variables,
// globbing such as /etc/sha*, command substitution), Windows paths in free
// text, and the directories that contain a protected path (a "dir" of
// "/home/u" is not flagged for ~/.ssh/**). A Windows path as the whole value
// of a path-ish field ("C:\Users\u\.aws\credentials", "\\server\share\x") is
// reported with "/" for "\" and kept relative ("C:/Users/u/.aws/credentials"),
// so "**/" globs match it.
//
// The time is linear in len(s) (times the glob work per path found), and at
// most MaxPathHits hits are returned per string; when there are more, hits
// that match a protected glob are kept first.

// MaxPathHits bounds the hits FindPaths returns for one string.
const MaxPathHits = 32

// FindPaths returns the filesystem paths s names, normalized, with the
// protected-path globs of opts each one matches. field is the property name
// s stood in. The caller fills PathHit.Arg and PathHit.Decoded.
func FindPaths(field, s string, opts Options) []PathHit {
	if s == "" {
		return nil
	}
	f := pathFinder{opts: opts, home: pathCleanHome(opts.Home)}
	f.wholeValue(field, s)
	f.fileURLs(s)
	f.plainWords(s)
	f.shellWords(s)
	if len(f.hits) == 0 {
		return nil
	}
	slices.SortStableFunc(f.hits, func(a, b pathHit) int { return a.pos - b.pos })
	out := make([]PathHit, len(f.hits))
	for i, h := range f.hits {
		out[i] = h.PathHit
	}
	return out
}

// ValidateProtectedPath tells why glob cannot be a protected_paths entry:
// empty, not valid doublestar syntax, "~user/" (only "~/" expands), or
// relative without a leading "**/" (such a glob matches only a path written
// relative in a path-ish field; "**/.env" is probably what was meant).
func ValidateProtectedPath(glob string) error {
	switch {
	case glob == "":
		return errors.New("empty glob")
	case !doublestar.ValidatePattern(glob):
		return fmt.Errorf("%q is not a valid glob", glob)
	case strings.HasPrefix(glob, "~") && glob != "~" && !strings.HasPrefix(glob, "~/"):
		return fmt.Errorf("%q: only ~/ expands (to the home directory); write the absolute path", glob)
	case !strings.HasPrefix(glob, "/") && !strings.HasPrefix(glob, "~") && !strings.HasPrefix(glob, "**/") && glob != "**":
		return fmt.Errorf("%q is relative: it matches only relative paths; write /%s, ~/%s or **/%s", glob, glob, glob, glob)
	}
	return nil
}

type pathHit struct {
	PathHit
	pos int
}

type pathFinder struct {
	opts  Options
	home  string
	globs []protectedGlob // compiled on the first path found
	ready bool
	hits  []pathHit
	full  bool // MaxPathHits hits, all protected: nothing more can be kept
}

type protectedGlob struct {
	written string // as the policy wrote it
	match   string // ~ expanded, lower-cased
}

func pathCleanHome(h string) string {
	if h == "" {
		return ""
	}
	return path.Clean(h)
}

// --- where paths are -------------------------------------------------------

// pathFields are the property names whose whole value is a path, compared
// lower case without "_", "-" and "." (so file_path, filePath and file-path
// are one name).
var pathFields = map[string]bool{
	"path": true, "paths": true, "pathname": true, "file": true, "files": true,
	"filename": true, "filenames": true, "filepath": true, "filepaths": true,
	"dir": true, "dirs": true, "dirname": true, "directory": true, "directories": true,
	"source": true, "sources": true, "destination": true, "target": true,
	"src": true, "dst": true, "dest": true, "cwd": true, "root": true,
	"workdir": true, "workingdir": true, "workingdirectory": true, "folder": true,
}

// pathWords are last words that make a longer name path-ish: output_path,
// configFile, working-dir, source_directory.
var pathWords = map[string]bool{
	"path": true, "paths": true, "file": true, "files": true, "filename": true,
	"filepath": true, "dir": true, "dirs": true, "directory": true, "folder": true,
}

// isPathField tells whether a property name announces a path: one of
// pathFields, or a longer name whose last word is one of pathWords. Words
// are split at "_", "-", ".", " " and lower-to-upper case changes.
func isPathField(field string) bool {
	if field == "" || len(field) > 64 {
		return false
	}
	var words []string
	start := 0
	flush := func(end int) {
		if end > start {
			words = append(words, strings.ToLower(field[start:end]))
		}
	}
	for i := 0; i < len(field); i++ {
		c := field[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			flush(i)
			start = i + 1
		case c >= 'A' && c <= 'Z' && i > start && (field[i-1] >= 'a' && field[i-1] <= 'z' || pathDigit(field[i-1])):
			flush(i)
			start = i
		}
	}
	flush(len(field))
	if len(words) == 0 {
		return false
	}
	return pathFields[strings.Join(words, "")] || len(words) > 1 && pathWords[words[len(words)-1]]
}

// wholeValue: the value of a path-ish field is one path, spaces included,
// unless it is a URL ("scheme:").
func (f *pathFinder) wholeValue(field, s string) {
	v := strings.TrimSpace(s)
	if v == "" || strings.IndexFunc(v, pathControl) >= 0 {
		return
	}
	if !isPathField(field) || pathHasScheme(v) {
		return // a URL; file: URLs are fileURLs' job
	}
	pos := strings.Index(s, v)
	if pathWindows(v) {
		f.add(pos, v, strings.ReplaceAll(v, `\`, "/"))
		return
	}
	f.add(pos, v, v)
}

// pathHasScheme: "scheme:" with a scheme of two characters or more (one letter
// and a colon is a Windows drive).
func pathHasScheme(v string) bool {
	i := 0
	for i < len(v) && (pathLetter(v[i]) || i > 0 && (pathDigit(v[i]) || v[i] == '+' || v[i] == '-' || v[i] == '.')) {
		i++
	}
	return i >= 2 && i < len(v) && v[i] == ':'
}

func pathWindows(v string) bool {
	return len(v) >= 3 && pathLetter(v[0]) && v[1] == ':' && (v[2] == '\\' || v[2] == '/') ||
		strings.HasPrefix(v, `\\`)
}

func pathDigit(c byte) bool { return c >= '0' && c <= '9' }

func pathControl(r rune) bool { return r < 0x20 || r == 0x7f }

// fileURLs: every file: URL in s. The path is percent-decoded and cut at a
// NUL (which C-based servers would cut at). A host other than localhost is
// a remote file by the RFC, but most libraries ignore it, and servers that
// strip "file://" by hand read HOST/PATH: both are reported.
func (f *pathFinder) fileURLs(s string) {
	for off := 0; off < len(s) && !f.full; {
		i := strings.IndexByte(s[off:], ':')
		if i < 0 {
			return
		}
		colon := off + i
		off = colon + 1
		start := colon - 4
		if start < 0 || !strings.EqualFold(s[start:colon], "file") ||
			start > 0 && pathSchemeByte(s[start-1]) ||
			colon+1 >= len(s) || s[colon+1] != '/' {
			continue
		}
		end := colon + 1
		for end < len(s) && !pathURLEnd(s[end]) {
			end++
		}
		raw := pathTrimPunct(s[start:end])
		off = start + len(raw)
		rest := raw[len("file:"):]
		if i := strings.IndexAny(rest, "?#"); i >= 0 {
			rest = rest[:i]
		}
		if !strings.HasPrefix(rest, "//") {
			f.add(start, raw, pathCutNUL(pathPercentDecode(rest))) // file:/etc/passwd
			continue
		}
		authority, p := rest[2:], ""
		if j := strings.IndexByte(authority, '/'); j >= 0 {
			authority, p = authority[:j], authority[j:]
		}
		p = pathCutNUL(pathPercentDecode(p))
		if p != "" {
			f.add(start, raw, p)
		}
		host := authority
		if j := strings.LastIndexByte(host, '@'); j >= 0 {
			host = host[j+1:]
		}
		if host != "" && !strings.EqualFold(host, "localhost") {
			f.add(start, raw, pathCutNUL(pathPercentDecode(rest[2:])))
		}
	}
}

func pathURLEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v', '"', '\'', '<', '>', '`', '|', 0:
		return true
	}
	return c < 0x20 || c == 0x7f
}

func pathCutNUL(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// pathPercentDecode decodes every valid %XX; an invalid escape stays as written.
func pathPercentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && pathHex(s[i+1]) && pathHex(s[i+2]) {
			b.WriteByte(pathUnhex(s[i+1])<<4 | pathUnhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func pathHex(c byte) bool { return pathDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

func pathUnhex(c byte) byte {
	if pathDigit(c) {
		return c - '0'
	}
	return (c | 0x20) - 'a' + 10
}

// pathBreaks: the bytes that end a word in plain splitting: ASCII white
// space and control bytes, quotes, and the shell's operators. Multi-byte
// white space (NBSP, ideographic space ...) breaks too.
var pathBreaks = func() (t [utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		t[c] = c <= ' ' || c == 0x7f || strings.IndexByte("\"'`|;&<>()", byte(c)) >= 0
	}
	return t
}()

// plainWords: s split at white space, quotes and shell operators. Quotes are
// breaks here, so an apostrophe in prose cannot hide what follows it.
func (f *pathFinder) plainWords(s string) {
	start := -1
	for i := 0; i < len(s) && !f.full; {
		c, n, brk := s[i], 1, false
		if c < utf8.RuneSelf {
			brk = pathBreaks[c]
		} else {
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			brk = unicode.IsSpace(r)
		}
		if brk && start >= 0 {
			f.word(start, s[start:i], s[start:i])
			start = -1
		} else if !brk && start < 0 {
			start = i
		}
		i += n
	}
	if start >= 0 && !f.full {
		f.word(start, s[start:], s[start:])
	}
}

// shellWords: s split as a POSIX shell splits words: quotes group and are
// removed, a backslash escapes the next byte (outside single quotes). An
// unterminated quote runs to the end of s.
func (f *pathFinder) shellWords(s string) {
	if !strings.ContainsAny(s, `"'\`) {
		return // the same words as plainWords
	}
	var b strings.Builder
	for i := 0; i < len(s) && !f.full; {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte(" |;&<>()`", c) >= 0 {
			i++
			continue
		}
		start, quote, escaped := i, byte(0), false
		b.Reset()
	word:
		for ; i < len(s); i++ {
			c := s[i]
			switch {
			case quote == '\'':
				if c == '\'' {
					quote, escaped = 0, true
					continue
				}
			case c == '\\' && i+1 < len(s):
				i++
				c, escaped = s[i], true
			case c == '"' && quote == '"':
				quote = 0
				continue
			case quote == 0 && (c == '"' || c == '\''):
				quote, escaped = c, true
				continue
			case quote == 0 && (c < 0x20 || c == 0x7f || strings.IndexByte(" |;&<>()`", c) >= 0):
				break word
			}
			b.WriteByte(c)
		}
		if escaped { // otherwise plainWords saw the same word
			f.word(start, s[start:i], b.String())
		}
	}
}

// word considers one word (w, written as raw at pos), and its parts after
// "=" (--file=/etc/shadow, if=/dev/sda).
func (f *pathFinder) word(pos int, raw, w string) {
	eq := strings.IndexByte(w, '=') >= 0
	if !eq && !pathStart(w) {
		return // most words of prose
	}
	if strings.Contains(w, "://") {
		return // a URL: a path on another machine (file: URLs are found apart)
	}
	f.candidate(pos, raw, w)
	if !eq {
		return
	}
	parts := strings.Split(w, "=")
	for _, p := range parts[1:] {
		f.candidate(pos, raw, p)
	}
}

// pathStart: w's first byte, after what candidate trims, can start a path.
func pathStart(w string) bool {
	i := 0
	for i < len(w) && (w[i] == '[' || w[i] == '{' || w[i] == '*') {
		i++
	}
	if i < len(w) && w[i] == '@' {
		i++
	}
	return i < len(w) && (w[i] == '/' || w[i] == '~' || w[i] == '$' || w[i] == '.')
}

// candidate adds w if, with prose punctuation trimmed, it starts like a path
// that prose does not write.
func (f *pathFinder) candidate(pos int, raw, w string) {
	w = strings.TrimLeft(w, "[{*")
	w = strings.TrimPrefix(w, "@")
	w = pathTrimPunct(w)
	if pathAbsolute(w) || pathHome(w) || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../") {
		f.add(pos, raw, w)
	}
}

// pathTrimPunct drops what ends a sentence or a bracket rather than the
// path; a final "." stays after "/" or "." ("/a/.", "../..").
func pathTrimPunct(w string) string {
	for len(w) > 0 {
		c := w[len(w)-1]
		if strings.IndexByte(",;:!?)]}*", c) >= 0 {
			w = w[:len(w)-1]
			continue
		}
		if c == '.' && len(w) >= 2 && w[len(w)-2] != '.' && w[len(w)-2] != '/' {
			w = w[:len(w)-1]
			continue
		}
		return w
	}
	return w
}

// pathAbsolute: "/" followed, somewhere, by something other than "/".
func pathAbsolute(w string) bool {
	return strings.HasPrefix(w, "/") && strings.TrimLeft(w, "/") != ""
}

// pathHome: "~/", "~user/", "$HOME/" or "${HOME}/".
func pathHome(w string) bool {
	return pathHomeRest(w) != "" || pathUserHome(w)
}

// pathHomeRest returns what follows the home directory in "~/x", "$HOME/x" or
// "${HOME}/x" ("/x"); "" if w does not start so.
func pathHomeRest(w string) string {
	for _, p := range [...]string{"~/", "$HOME/", "${HOME}/"} {
		if strings.HasPrefix(w, p) {
			return w[len(p)-1:]
		}
	}
	return ""
}

// pathUserHome: "~user/..." (another user's home: not expanded).
func pathUserHome(w string) bool {
	if len(w) < 3 || w[0] != '~' {
		return false
	}
	for i := 1; i < len(w); i++ {
		c := w[i]
		switch {
		case c == '/':
			return i > 1
		case pathLetter(c) || pathDigit(c) || c == '.' || c == '_' || c == '-':
		default:
			return false
		}
	}
	return false
}

// --- normalizing and matching ----------------------------------------------

// normalize expands the home directory and cleans p lexically.
func (f *pathFinder) normalize(p string) string {
	if f.home != "" {
		if rest := pathHomeRest(p); rest != "" {
			p = f.home + rest
		} else if p == "~" || p == "$HOME" || p == "${HOME}" {
			p = f.home
		}
	}
	return path.Clean(p)
}

// add normalizes p (written as raw at pos), matches it and keeps the hit:
// at most MaxPathHits, protected ones first.
func (f *pathFinder) add(pos int, raw, p string) {
	if p == "" || f.full {
		return
	}
	clean := f.normalize(p)
	for _, h := range f.hits {
		if h.Path == clean && h.Raw == raw {
			return
		}
	}
	hit := pathHit{PathHit: PathHit{Path: clean, Raw: raw, Protected: f.protected(clean)}, pos: pos}
	if len(f.hits) < MaxPathHits {
		f.hits = append(f.hits, hit)
		return
	}
	if len(hit.Protected) == 0 {
		return
	}
	// Full: a protected hit replaces the last unprotected one.
	for i := len(f.hits) - 1; i >= 0; i-- {
		if len(f.hits[i].Protected) == 0 {
			f.hits = append(f.hits[:i], f.hits[i+1:]...)
			f.hits = append(f.hits, hit)
			return
		}
	}
	f.full = true
}

// protected returns the globs (as written) that the normalized path p
// matches.
func (f *pathFinder) protected(p string) []string {
	if !f.ready {
		f.compile()
	}
	if len(f.globs) == 0 {
		return nil
	}
	lp := strings.ToLower(p)
	var out []string
	for _, g := range f.globs {
		if !slices.Contains(out, g.written) && doublestar.MatchUnvalidated(g.match, lp) {
			out = append(out, g.written)
		}
	}
	return out
}

// compile prepares the globs: ~ expanded, lower-cased, invalid ones left
// out (they never match; ValidateProtectedPath reports them). The last
// compiled set is kept, since a scan calls FindPaths once per string with
// the same options.
func (f *pathFinder) compile() {
	f.ready = true
	if c := globCache.Load(); c != nil && c.home == f.home && slices.Equal(c.written, f.opts.ProtectedPaths) {
		f.globs = c.globs
		return
	}
	c := &compiledGlobs{home: f.home, written: slices.Clone(f.opts.ProtectedPaths)}
	for _, g := range c.written {
		if g == "" || !doublestar.ValidatePattern(g) {
			continue
		}
		m := g
		if f.home != "" {
			if g == "~" {
				m = f.home
			} else if strings.HasPrefix(g, "~/") {
				m = f.home + g[1:]
			}
		}
		c.globs = append(c.globs, protectedGlob{written: g, match: strings.ToLower(m)})
	}
	globCache.Store(c)
	f.globs = c.globs
}

type compiledGlobs struct {
	home    string
	written []string // a copy: the caller may reuse its slice
	globs   []protectedGlob
}

var globCache atomic.Pointer[compiledGlobs]

func pathLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func pathSchemeByte(c byte) bool {
	return pathLetter(c) || pathDigit(c) || c == '+' || c == '-' || c == '.'
}
