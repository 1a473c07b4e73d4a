// Package audit writes and verifies an append-only, hash-chained JSONL log.
//
// Each record is one line holding one JSON object. The package is generic:
// callers pass any value that marshals to a JSON object and the package adds
// the chain fields:
//
//	{"seq":N,"prev":"<hex>", ...caller fields...,"hash":"<64 hex>"}
//
// body is the line without its trailing `,"hash":"…"` member, i.e. the
// object {"seq":N,"prev":"…",...caller fields...}; hash = hex(SHA-256(body)).
// prev is the previous line's hash ("" for seq 1) and seq counts from 1.
// Because the hash covers the exact bytes of the line, any changed byte is
// detected on that line; removing, reordering or inserting lines breaks the
// prev/seq link on the following line. A chain alone cannot detect that the
// newest records were cut off, nor a rewrite that recomputes every hash:
// anchor Entry.Hash somewhere else if that matters.
//
// Several processes may append to the same file: every Append holds an
// exclusive flock(2) on it and re-reads the last record whenever the file
// grew behind its back, so the chain stays a single chain.
package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

const (
	hashHexLen = 2 * sha256.Size
	// suffix is `,"hash":"` + 64 hex + `"}`: fixed length, so a verifier can
	// cut it off without parsing the line.
	hashKey    = `,"hash":"`
	suffixLen  = len(hashKey) + hashHexLen + len(`"}`)
	seqPrefix  = `{"seq":`
	prevPrefix = `,"prev":"`
)

// Entry identifies an appended record.
type Entry struct {
	Seq  int64  // 1-based position in the chain
	Hash string // hex SHA-256 of the record; the next record's "prev"
}

// Writer appends records to a chain. It is safe for concurrent use.
type Writer struct {
	// Sync makes every Append fsync the file before returning (for writers
	// whose destination has a Sync method). Off by default: each record is
	// still handed to the OS in one write, which survives a process crash
	// but not a power loss. Set it before the first Append.
	Sync bool

	mu     sync.Mutex
	out    io.Writer
	f      *os.File // nil for New: no locking, no tail reads
	fd     int
	closed bool

	seq      int64
	prev     [hashHexLen]byte
	havePrev bool
	size     int64 // file size after our last write; -1 forces a re-read
	dropped  int64
	resyncs  int // tail reads, for tests of the single-writer fast path

	enc  *json.Encoder
	rec  bytes.Buffer // caller's marshalled record
	line []byte       // composed output line, reused
	tail []byte       // tail-read buffer, reused
}

// New returns a Writer that starts a fresh chain on w (for example
// os.Stderr). It takes no file lock and reads nothing back, so only one
// Writer may feed a given destination. Close does not close w.
func New(w io.Writer) *Writer {
	return newWriter(w)
}

func newWriter(out io.Writer) *Writer {
	w := &Writer{out: out, size: -1}
	w.enc = json.NewEncoder(&w.rec)
	// The log is not HTML: keep <, > and & readable. Verification hashes the
	// raw line bytes, so the escaping style never affects it.
	w.enc.SetEscapeHTML(false)
	return w
}

// Open opens path for appending, creating it (mode 0600, parent
// directories 0700) if needed, and continues the chain from the last
// complete record in the file; only the tail of the file is read.
//
// An incomplete final line left by a crash mid-write is cut off (see
// Dropped). Open fails if the last complete line is not a valid record, so
// a foreign or damaged file is never silently extended.
func Open(path string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	// O_RDWR rather than O_WRONLY: the tail is read back with pread.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	w := newWriter(f)
	w.f = f
	w.fd = int(f.Fd())
	if err := w.withLock(func(size int64) error { return w.resync(size) }); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Dropped reports how many bytes of incomplete trailing record (left by a
// writer that crashed mid-write) this Writer removed before appending.
func (w *Writer) Dropped() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped
}

// Close closes the file opened by Open. Further Appends fail.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.f != nil {
		return w.f.Close()
	}
	return nil
}

// Append adds rec, which must marshal to a JSON object without top-level
// "seq", "prev" or "hash" members, as the next record. The line goes to the
// OS in a single write before Append returns. On error nothing is written.
func (w *Writer) Append(rec any) (Entry, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return Entry{}, fmt.Errorf("audit: append: %w", os.ErrClosed)
	}

	// Marshal before taking the file lock to keep other processes' wait short.
	w.rec.Reset()
	if err := w.enc.Encode(rec); err != nil {
		return Entry{}, fmt.Errorf("audit: marshal record: %w", err)
	}
	obj := bytes.TrimSuffix(w.rec.Bytes(), []byte{'\n'})
	if err := checkObject(obj); err != nil {
		return Entry{}, err
	}

	var e Entry
	write := func(size int64) error {
		if w.f != nil && size != w.size {
			// Another writer appended (or this is the first write): pick up
			// its last record. Single-writer Appends never get here.
			if err := w.resync(size); err != nil {
				return err
			}
		}
		e = w.compose(obj)
		n, err := w.out.Write(w.line)
		if err != nil {
			// A partial line may be on disk; the next Append re-reads the
			// tail and cuts it off. The chain state was not advanced.
			w.size = -1
			return fmt.Errorf("audit: write: %w", err)
		}
		w.size = size + int64(n)
		w.seq = e.Seq
		copy(w.prev[:], e.Hash)
		w.havePrev = true
		return nil
	}

	var err error
	if w.f != nil {
		err = w.withLock(write)
	} else {
		err = write(-1)
	}
	if err != nil {
		return Entry{}, err
	}
	if w.Sync {
		// After the flock is released: fsync flushes everything written so
		// far, so other processes need not wait for the disk.
		if s, ok := w.out.(interface{ Sync() error }); ok {
			if err := s.Sync(); err != nil {
				return e, fmt.Errorf("audit: sync: %w", err)
			}
		}
	}
	return e, nil
}

// compose builds the next line in w.line and returns its Entry. w.seq and
// w.prev are the chain head.
func (w *Writer) compose(obj []byte) Entry {
	seq := w.seq + 1
	b := append(w.line[:0], seqPrefix...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, prevPrefix...)
	if w.havePrev {
		b = append(b, w.prev[:]...)
	}
	b = append(b, '"')
	if len(obj) > 2 { // not "{}"
		b = append(b, ',')
		b = append(b, obj[1:len(obj)-1]...)
	}
	b = append(b, '}')
	sum := sha256.Sum256(b)
	b = append(b[:len(b)-1], hashKey...)
	b = hex.AppendEncode(b, sum[:])
	b = append(b, '"', '}', '\n')
	w.line = b
	return Entry{Seq: seq, Hash: string(b[len(b)-3-hashHexLen : len(b)-3])}
}

// checkObject reports whether obj (compact JSON from encoding/json) is an
// object that does not use the chain's own member names.
func checkObject(obj []byte) error {
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return errors.New("audit: record must marshal to a JSON object")
	}
	// A duplicate "seq"/"prev"/"hash" would let a JSON reader (which keeps
	// the last duplicate) see values other than the chained ones.
	depth, wantKey := 0, false
	for i := 0; i < len(obj); i++ {
		switch c := obj[i]; c {
		case '"':
			end := i + 1
			escaped := false
			for ; end < len(obj) && obj[end] != '"'; end++ {
				if obj[end] == '\\' {
					escaped = true
					end++
				}
			}
			if depth == 1 && wantKey && isReserved(obj[i:end+1], escaped) {
				return fmt.Errorf("audit: record must not have a top-level %s member", obj[i:end+1])
			}
			wantKey = false
			i = end
		case '{', '[':
			depth++
			wantKey = depth == 1
		case '}', ']':
			depth--
		case ',':
			wantKey = depth == 1
		}
	}
	return nil
}

func isReserved(quoted []byte, escaped bool) bool {
	key := string(quoted[1 : len(quoted)-1])
	if escaped {
		// Rare: a Marshaler wrote e.g. "s\u0065q"; compare the decoded key.
		if json.Unmarshal(quoted, &key) != nil {
			return false
		}
	}
	return key == "seq" || key == "prev" || key == "hash"
}

// withLock runs fn with the file exclusively flocked, passing the current
// file size.
func (w *Writer) withLock(fn func(size int64) error) error {
	if err := lockFile(w.fd); err != nil {
		return fmt.Errorf("audit: lock %s: %w", w.f.Name(), err)
	}
	defer unlockFile(w.fd)
	size, err := fileSize(w.fd)
	if err != nil {
		return fmt.Errorf("audit: stat %s: %w", w.f.Name(), err)
	}
	return fn(size)
}

// resync loads the chain head from the last complete line of the file,
// which is size bytes long. Called with the file lock held.
func (w *Writer) resync(size int64) error {
	w.seq, w.havePrev, w.size = 0, false, -1
	w.resyncs++
	line, end, err := readLastLine(w.f, size, &w.tail)
	if err != nil {
		return fmt.Errorf("audit: read tail of %s: %w", w.f.Name(), err)
	}
	if end < size {
		frag := make([]byte, size-end)
		if _, err := w.f.ReadAt(frag, end); err != nil {
			return fmt.Errorf("audit: read tail of %s: %w", w.f.Name(), err)
		}
		// Only cut what looks like the start of one of our lines, so a
		// foreign file is never damaged.
		if !isRecordPrefix(frag) {
			return fmt.Errorf("audit: %s ends with %d bytes that are not a record", w.f.Name(), len(frag))
		}
		if err := w.f.Truncate(end); err != nil {
			return fmt.Errorf("audit: cut incomplete record from %s: %w", w.f.Name(), err)
		}
		w.dropped += size - end
	}
	if line != nil {
		r, verr := parseLine(line)
		if verr != nil {
			return fmt.Errorf("audit: last record of %s is invalid: %w %s", w.f.Name(), verr.Err, verr.Detail)
		}
		w.seq = r.seq
		copy(w.prev[:], r.hash)
		w.havePrev = true
	}
	w.size = end
	return nil
}

func isRecordPrefix(frag []byte) bool {
	n := min(len(frag), len(seqPrefix))
	return string(frag[:n]) == seqPrefix[:n]
}

// readLastLine returns the last newline-terminated line of f (without the
// newline; nil if there is none) and the offset just past that newline.
// It reads backwards in growing chunks, so a long file costs only its tail;
// the first chunk holds a few typical records. *scratch is reused.
func readLastLine(f *os.File, size int64, scratch *[]byte) ([]byte, int64, error) {
	for want := int64(8 << 10); ; want *= 2 {
		off := max(0, size-want)
		if int64(cap(*scratch)) < size-off {
			*scratch = make([]byte, size-off)
		}
		buf := (*scratch)[:size-off]
		if _, err := f.ReadAt(buf, off); err != nil {
			return nil, 0, err
		}
		nl := bytes.LastIndexByte(buf, '\n')
		if nl < 0 {
			if off == 0 {
				return nil, 0, nil
			}
			continue
		}
		start := bytes.LastIndexByte(buf[:nl], '\n')
		if start < 0 && off > 0 {
			continue
		}
		return buf[start+1 : nl], off + int64(nl) + 1, nil
	}
}
