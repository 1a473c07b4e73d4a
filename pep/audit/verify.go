package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Reasons a log fails verification; test with errors.Is. Only ErrTruncated
// is expected after a crash; the others mean the file was altered (or is
// not an audit log).
var (
	// ErrTampered: a line's stored hash does not match its contents.
	ErrTampered = errors.New("hash mismatch: record altered")
	// ErrBrokenLink: a line's prev/seq does not follow the line before it,
	// i.e. a record was removed, reordered or inserted.
	ErrBrokenLink = errors.New("broken chain link: record removed, reordered or inserted")
	// ErrNotJSON: the line is not JSON at all.
	ErrNotJSON = errors.New("not JSON")
	// ErrMalformed: JSON, but not laid out as a chain record.
	ErrMalformed = errors.New("not an audit record")
	// ErrTruncated: the last line has no trailing newline, the signature of
	// a writer that crashed mid-write. The records before it are intact.
	ErrTruncated = errors.New("last line incomplete (crash during write?)")
)

// VerifyError reports the first line of a log that failed verification.
type VerifyError struct {
	Line   int   // 1-based line number
	Err    error // one of ErrTampered, ErrBrokenLink, ErrNotJSON, ErrMalformed, ErrTruncated
	Detail string
}

func (e *VerifyError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("audit: line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("audit: line %d: %v: %s", e.Line, e.Err, e.Detail)
}

func (e *VerifyError) Unwrap() error { return e.Err }

// Verify reads a whole log and checks every line's hash and its link to the
// line before. It returns the number of valid records before the first bad
// line and, if there is one, a *VerifyError naming it. For a log whose only
// fault is an incomplete last line the error wraps ErrTruncated and the
// count covers every complete record. Read errors are returned as they are.
func Verify(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		scratch  []byte
		prevHash [hashHexLen]byte
		prevSeq  int64
		n        int
	)
	for lineNo := 1; ; lineNo++ {
		line, complete, err := readLine(br, &scratch)
		if err != nil && err != io.EOF {
			return n, fmt.Errorf("audit: read line %d: %w", lineNo, err)
		}
		if !complete {
			if len(line) == 0 {
				return n, nil
			}
			return n, &VerifyError{Line: lineNo, Err: ErrTruncated,
				Detail: fmt.Sprintf("%d bytes without a trailing newline", len(line))}
		}
		rec, verr := parseLine(line)
		if verr != nil {
			verr.Line = lineNo
			return n, verr
		}
		switch {
		case lineNo == 1 && len(rec.prev) != 0:
			return n, &VerifyError{Line: lineNo, Err: ErrBrokenLink, Detail: "first record has a non-empty prev: the start of the chain is missing"}
		case lineNo > 1 && !bytes.Equal(rec.prev, prevHash[:]):
			return n, &VerifyError{Line: lineNo, Err: ErrBrokenLink, Detail: fmt.Sprintf("prev does not match the hash of line %d", lineNo-1)}
		case rec.seq != prevSeq+1:
			return n, &VerifyError{Line: lineNo, Err: ErrBrokenLink, Detail: fmt.Sprintf("seq %d, want %d", rec.seq, prevSeq+1)}
		}
		copy(prevHash[:], rec.hash)
		prevSeq = rec.seq
		n++
	}
}

// readLine returns the next line without its '\n'. complete is false when
// the input ended before a newline. Lines longer than the bufio buffer are
// gathered in *scratch, so there is no line length limit.
func readLine(br *bufio.Reader, scratch *[]byte) (line []byte, complete bool, err error) {
	frag, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		if err == nil {
			return frag[:len(frag)-1], true, nil
		}
		return frag, false, err
	}
	buf := append((*scratch)[:0], frag...)
	for {
		frag, err = br.ReadSlice('\n')
		buf = append(buf, frag...)
		*scratch = buf
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			return buf[:len(buf)-1], true, nil
		default:
			return buf, false, err
		}
	}
}

// record holds the chain fields of a parsed line; the slices point into it.
type record struct {
	seq  int64
	prev []byte // empty or 64 hex digits
	hash []byte // 64 hex digits
}

// parseLine checks one line (without '\n'): its hash first, so that any
// altered byte reports ErrTampered rather than a derived symptom, then its
// layout. The returned error's Line is left for the caller to fill in.
func parseLine(line []byte) (record, *VerifyError) {
	bad := func(err error, detail string) (record, *VerifyError) {
		return record{}, &VerifyError{Err: err, Detail: detail}
	}
	if len(line) < len(seqPrefix)+1+len(prevPrefix)+1+suffixLen ||
		!bytes.HasPrefix(line[len(line)-suffixLen:], []byte(hashKey)) ||
		!bytes.HasSuffix(line, []byte(`"}`)) ||
		!isHex(line[len(line)-suffixLen+len(hashKey):len(line)-2]) {
		if !json.Valid(line) {
			return bad(ErrNotJSON, "")
		}
		return bad(ErrMalformed, `no trailing "hash" member`)
	}
	stored := line[len(line)-suffixLen+len(hashKey) : len(line)-2]
	body := line[:len(line)-suffixLen]

	h := sha256.New()
	h.Write(body)
	h.Write([]byte{'}'})
	var sum [sha256.Size]byte
	var got [hashHexLen]byte
	hex.Encode(got[:], h.Sum(sum[:0]))
	if !bytes.Equal(got[:], stored) {
		return bad(ErrTampered, "")
	}
	// Unreachable for lines this package wrote; catches hand-made ones.
	if !json.Valid(line) {
		return bad(ErrNotJSON, "hash matches but the line is not valid JSON")
	}

	const header = `line must start with {"seq":N,"prev":"…"`
	rest, ok := bytes.CutPrefix(body, []byte(seqPrefix))
	if !ok {
		return bad(ErrMalformed, header)
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	seq, err := strconv.ParseInt(string(rest[:i]), 10, 64)
	if err != nil || seq < 1 || rest[0] == '0' {
		return bad(ErrMalformed, header)
	}
	rest, ok = bytes.CutPrefix(rest[i:], []byte(prevPrefix))
	if !ok {
		return bad(ErrMalformed, header)
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || (end != 0 && (end != hashHexLen || !isHex(rest[:end]))) {
		return bad(ErrMalformed, "prev must be empty or 64 hex digits")
	}
	return record{seq: seq, prev: rest[:end], hash: stored}, nil
}

// isHex accepts lowercase hex only: the writer never emits uppercase, and a
// case change must not slip through as the same hash.
func isHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
