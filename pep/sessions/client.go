package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// maxCmdline caps the command line kept in a record; it is there for a
// person to recognise the client, not to reproduce it.
const maxCmdline = 1024

// Client identifies a client process. A process ID alone does not: the
// kernel reuses it, so the process's start time is part of the identity.
type Client struct {
	PID int `json:"pid"`
	// StartTime is field 22 of /proc/PID/stat (clock ticks after boot); 0
	// when /proc is not available.
	StartTime uint64 `json:"start_time"`
	// Cmdline is the process's command line, arguments separated by spaces
	// and cut at 1 KiB; informational.
	Cmdline string `json:"cmdline,omitempty"`
}

// procRoot is where the process table is read; tests may point it away.
var procRoot = "/proc"

// ParentClient returns the client that started this process: its parent.
// Without /proc (not Linux), StartTime is 0 and Cmdline is empty.
func ParentClient() (*Client, error) {
	for range 3 {
		ppid := os.Getppid()
		c, err := ProcessClient(ppid)
		if err != nil {
			return nil, err
		}
		// If the parent exited while /proc was read, its PID may already
		// belong to another process; the parent PID then changes (we are
		// reparented), so a PID that is still our parent's is the parent.
		if os.Getppid() == ppid {
			return c, nil
		}
	}
	return nil, errors.New("sessions: the parent process keeps changing")
}

// ProcessClient describes the running process pid. Without /proc it returns
// a Client with only the PID.
func ProcessClient(pid int) (*Client, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("sessions: invalid process ID %d", pid)
	}
	st, err := readStat(pid)
	if errors.Is(err, fs.ErrNotExist) && !procAvailable() {
		return &Client{PID: pid}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sessions: process %d: %w", pid, err)
	}
	if st.zombie {
		return nil, fmt.Errorf("sessions: process %d has exited", pid)
	}
	c := &Client{PID: pid, StartTime: st.start}
	if raw, err := os.ReadFile(procPath(pid, "cmdline")); err == nil {
		raw = bytes.TrimRight(raw, "\x00")
		raw = bytes.ReplaceAll(raw, []byte{0}, []byte{' '})
		if len(raw) > maxCmdline {
			raw = raw[:maxCmdline]
		}
		c.Cmdline = string(bytes.ToValidUTF8(raw, []byte("?")))
	}
	return c, nil
}

// ClientSessionID is the ID of the client-derived session of c:
// "client-<pid>-<starttime>". A reused PID is another process and so
// another session.
func ClientSessionID(c *Client) string {
	return "client-" + strconv.Itoa(c.PID) + "-" + strconv.FormatUint(c.StartTime, 10)
}

// Alive reports whether the process c still runs: the same PID with the
// same start time (a reused PID is another process; an exited process not
// yet reaped by its parent is not alive). When /proc/PID/stat cannot be read
// for another reason than the process being gone, Alive says true: it cannot
// tell, and a live client's session must never be removed as stale. Without
// /proc, or for a Client recorded without a start time, only the PID is
// checked, which a reused PID fools.
//
// PIDs are those of this process's PID namespace: processes that share a
// state directory must share a PID namespace.
func (c *Client) Alive() bool {
	if c == nil || c.PID <= 0 {
		return false
	}
	if c.StartTime == 0 {
		return pidExists(c.PID)
	}
	st, err := readStat(c.PID)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return false
	}
	if err != nil {
		// Cannot tell (out of file descriptors, say): a live client's
		// session must not be taken for stale and removed.
		return true
	}
	return !st.zombie && st.start == c.StartTime
}

type procStat struct {
	start  uint64
	zombie bool
}

// readStat reads the state and start time of pid from /proc/PID/stat:
// "pid (comm) state ppid ... starttime ...". comm may hold spaces and
// parentheses, so the fields are counted from the last ')'.
func readStat(pid int) (procStat, error) {
	raw, err := os.ReadFile(procPath(pid, "stat"))
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("unexpected %s", procPath(pid, "stat"))
	}
	fields := bytes.Fields(raw[i+1:])
	// fields[0] is field 3 (state); field 22 (starttime) is fields[19].
	if len(fields) < 20 {
		return procStat{}, fmt.Errorf("unexpected %s: %d fields", procPath(pid, "stat"), len(fields)+2)
	}
	start, err := strconv.ParseUint(string(fields[19]), 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("unexpected %s: start time: %w", procPath(pid, "stat"), err)
	}
	state := fields[0]
	return procStat{start: start, zombie: len(state) == 1 && (state[0] == 'Z' || state[0] == 'X')}, nil
}

func procPath(pid int, name string) string {
	return procRoot + "/" + strconv.Itoa(pid) + "/" + name
}

func procAvailable() bool {
	_, err := os.Stat(procRoot + "/self/stat")
	return err == nil
}
