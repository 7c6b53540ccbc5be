package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
)

// tailer follows one log file the way `tail -F` does and keeps the last
// window bytes of it, line-aligned, for the next diagnosis snapshot.
//
// The bytes it has read form one logical stream that goes on across
// truncation and rotation; offsets and line numbers count in that stream
// from where the agent started reading.
type tailer struct {
	path   string
	window int

	f   *os.File
	fi  os.FileInfo // of f, to notice rotation
	off int64       // read position in f

	buf      []byte // the window: whole lines, except maybe the last
	base     int64  // logical offset of buf[0]
	baseLine uint64 // lines before buf[0]
	total    int64  // logical bytes read so far

	started bool
	events  []string // "truncated", "rotated", for the agent to report
}

func newTailer(path string, window int) *tailer {
	return &tailer{path: path, window: window}
}

// poll reads whatever was appended since the last poll, reopening the path
// when the file was rotated (the path names another file) and rereading
// from the start when it was truncated. It reports whether bytes arrived.
func (t *tailer) poll() (bool, error) {
	before := t.total
	if t.f == nil {
		if err := t.open(); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil // not there yet; keep waiting
			}
			return false, err
		}
	}
	if fi, err := os.Stat(t.path); err == nil && !os.SameFile(fi, t.fi) {
		// Rotated: finish the old file, then follow the new one.
		if err := t.readToEOF(); err != nil {
			return false, err
		}
		t.f.Close()
		t.f = nil
		t.endLine()
		t.events = append(t.events, "rotated")
		if err := t.open(); err != nil {
			return t.total > before, err
		}
	} else if err == nil {
		if cur, err := t.f.Stat(); err == nil && cur.Size() < t.off {
			// Truncated in place (copytruncate): start over at 0.
			t.off = 0
			t.endLine()
			t.events = append(t.events, "truncated")
		}
	}
	if err := t.readToEOF(); err != nil {
		return t.total > before, err
	}
	return t.total > before, nil
}

func (t *tailer) open() error {
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	t.f, t.fi, t.off = f, fi, 0
	if !t.started {
		// First open: take up to one window of backlog, from a line start.
		t.started = true
		if fi.Size() > int64(t.window) {
			t.off = fi.Size() - int64(t.window)
			if err := t.skipToLineStart(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *tailer) skipToLineStart() error {
	b := make([]byte, 64<<10)
	for {
		n, err := t.f.ReadAt(b, t.off)
		if i := bytes.IndexByte(b[:n], '\n'); i >= 0 {
			t.off += int64(i) + 1
			return nil
		}
		t.off += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (t *tailer) readToEOF() error {
	chunk := make([]byte, 256<<10)
	for {
		n, err := t.f.ReadAt(chunk, t.off)
		if n > 0 {
			t.off += int64(n)
			t.append(chunk[:n])
		}
		if err == io.EOF || n == 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// endLine terminates a last line left without its newline when the file it
// came from ends (rotation, truncation), so it does not merge with the first
// line of what follows.
func (t *tailer) endLine() {
	if len(t.buf) > 0 && t.buf[len(t.buf)-1] != '\n' {
		t.append([]byte{'\n'})
	}
}

func (t *tailer) append(p []byte) {
	t.buf = append(t.buf, p...)
	t.total += int64(len(p))
	// Trim with some slack so a file growing fast is not memmoved per read.
	if over := len(t.buf) - t.window; over > 0 && over >= t.window/4 {
		cut := over
		if i := bytes.IndexByte(t.buf[over:], '\n'); i >= 0 {
			cut = over + i + 1
		}
		t.baseLine += uint64(bytes.Count(t.buf[:cut], []byte{'\n'}))
		t.base += int64(cut)
		t.buf = append(t.buf[:0], t.buf[cut:]...)
	}
}

func (t *tailer) close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}
