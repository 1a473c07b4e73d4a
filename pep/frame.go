package pep

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxFrameBytes is the largest line airlock relays unless configured
// otherwise. MCP results carry images and files; 64 MiB leaves room for them
// while bounding what one frame can make airlock hold in memory.
const DefaultMaxFrameBytes = 64 << 20

// readChunk is the bufio buffer size: small frames are handed out straight
// from it, without a copy.
const readChunk = 64 << 10

// FrameTooLargeError reports a line longer than the configured maximum. The
// rest of the line has been discarded; Prefix holds its start so the caller
// can still find the request id and answer it.
type FrameTooLargeError struct {
	Limit  int
	Prefix []byte
}

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("frame larger than the %d-byte limit", e.Limit)
}

// FrameReader splits a stream into newline-delimited frames of any length up
// to a limit.
type FrameReader struct {
	r      *bufio.Reader
	max    int
	big    []byte   // the start of an oversized line, for its error
	blocks [][]byte // reused list of the blocks of a long line
}

// NewFrameReader reads frames of at most max bytes from r.
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = DefaultMaxFrameBytes
	}
	return &FrameReader{r: bufio.NewReaderSize(r, readChunk), max: max}
}

// Next returns the next non-blank frame without its line ending. The slice is
// only valid until the next call. A final line without a newline is returned
// as a frame; io.EOF follows it.
func (fr *FrameReader) Next() ([]byte, error) {
	for {
		line, err := fr.readLine()
		if err != nil {
			if !errors.Is(err, io.EOF) || len(line) == 0 {
				return nil, err
			}
			// The last line, without a newline: a frame like any other.
			if line, err = fr.checkLimit(trimEOL(line)); err != nil {
				return nil, err
			}
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
	}
}

func (fr *FrameReader) readLine() ([]byte, error) {
	line, err := fr.r.ReadSlice('\n')
	if err == nil {
		return fr.checkLimit(trimEOL(line))
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	// A long line: gather it in blocks, then copy it once into a buffer of
	// its exact size. Growing one buffer instead would leave a trail of
	// outgrown copies (about four times the frame at Go's growth rate) for
	// the GC, and the heap goal would follow them: this keeps the peak near
	// two frames, for a moment, then one.
	blocks := fr.blocks[:0]
	block := append(make([]byte, 0, 2*len(line)), line...)
	total := len(line)
	for {
		line, err = fr.r.ReadSlice('\n')
		total += len(line)
		if total > fr.max+2 { // +2 for the line ending
			first := block
			if len(blocks) > 0 {
				first = blocks[0]
			}
			fr.big = first[:min(len(first), 4096)]
			fr.blocks = clearBlocks(blocks)
			return nil, fr.discard(err)
		}
		if len(block)+len(line) > cap(block) {
			// Blocks double up to bigBlock: a line just over the buffer
			// costs little, a 16 MiB one a few dozen blocks.
			blocks = append(blocks, block)
			block = make([]byte, 0, max(len(line), min(2*total, bigBlock)))
		}
		block = append(block, line...)
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			// EOF (or a read error) in the middle of a line: what came.
			return join(append(blocks, block), total), err
		}
		if err == nil {
			frame := join(append(blocks, block), total)
			fr.blocks = clearBlocks(blocks)
			return fr.checkLimit(trimEOL(frame))
		}
	}
}

// bigBlock is the largest block for gathering long lines.
const bigBlock = 1 << 20

// join copies blocks into one buffer of size total.
func join(blocks [][]byte, total int) []byte {
	out := make([]byte, 0, total)
	for _, b := range blocks {
		out = append(out, b...)
	}
	return out
}

// clearBlocks drops the references to the blocks so that they can be
// collected, keeping the slice for the next long line.
func clearBlocks(blocks [][]byte) [][]byte {
	clear(blocks)
	return blocks[:0]
}

// HasFrame reports whether a whole line is already buffered, so that Next
// will not wait for input. (It looks at the next line only.)
func (fr *FrameReader) HasFrame() bool {
	n := fr.r.Buffered()
	if n == 0 {
		return false
	}
	b, _ := fr.r.Peek(n)
	return bytes.IndexByte(b, '\n') >= 0
}

// checkLimit refuses a complete line longer than the limit.
func (fr *FrameReader) checkLimit(frame []byte) ([]byte, error) {
	if len(frame) <= fr.max {
		return frame, nil
	}
	return nil, &FrameTooLargeError{Limit: fr.max, Prefix: append([]byte(nil), frame[:min(len(frame), 4096)]...)}
}

// discard skips the rest of an oversized line and reports it, with the
// line's first bytes (in fr.big) as the prefix.
func (fr *FrameReader) discard(err error) error {
	prefix := append([]byte(nil), fr.big...)
	fr.big = nil
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = fr.r.ReadSlice('\n')
	}
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
		return err
	}
	return &FrameTooLargeError{Limit: fr.max, Prefix: prefix}
}

func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'})
}

// FrameWriter writes whole frames to one endpoint. Both proxy directions may
// write to the same endpoint (a refusal goes back the way it came), so writes
// are serialized and a frame is never interleaved with another.
//
// Small frames may be deferred (WriteDeferred) and written together by the
// next Write or Flush: in a burst, one system call carries many frames. The
// pump that owns the writer flushes before it waits for input, so a
// deferred frame is never held while nothing else is coming.
type FrameWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // deferred frames, each with its newline
}

// maxPending is how many bytes of deferred frames are written at once.
const maxPending = 64 << 10

// NewFrameWriter writes frames to w.
func NewFrameWriter(w io.Writer) *FrameWriter {
	return &FrameWriter{w: w}
}

// Write writes the deferred frames, then frame followed by a newline.
func (fw *FrameWriter) Write(frame []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return fw.write(frame, true)
}

// WriteDeferred writes frame followed by a newline, or queues it to go with
// the next frames; Flush writes what is queued.
func (fw *FrameWriter) WriteDeferred(frame []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return fw.write(frame, false)
}

// Flush writes the deferred frames.
func (fw *FrameWriter) Flush() error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return fw.flush()
}

func (fw *FrameWriter) write(frame []byte, now bool) error {
	if len(frame) >= readChunk {
		// A large frame goes out as it is, without a copy.
		if err := fw.flush(); err != nil {
			return err
		}
		if _, err := fw.w.Write(frame); err != nil {
			return err
		}
		_, err := fw.w.Write([]byte{'\n'})
		return err
	}
	// One write call for small frames: fewer syscalls, and a reader on
	// the other end sees the whole line at once.
	fw.pending = append(append(fw.pending, frame...), '\n')
	if now || len(fw.pending) >= maxPending {
		return fw.flush()
	}
	return nil
}

func (fw *FrameWriter) flush() error {
	if len(fw.pending) == 0 {
		return nil
	}
	_, err := fw.w.Write(fw.pending)
	if cap(fw.pending) > 4*maxPending {
		fw.pending = nil
	} else {
		fw.pending = fw.pending[:0]
	}
	return err
}
