//go:build !unix

package sessions

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// Without flock several airlock processes would lose each other's updates:
// the store refuses to work rather than lose a taint.
const (
	openReadFlags = os.O_RDONLY
	openLockFlags = os.O_RDWR | os.O_CREATE
)

func tryLock(*os.File) (bool, error) {
	return false, fmt.Errorf("file locking not supported on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func lockWait(*os.File) error { return errors.ErrUnsupported }

func unlock(*os.File) {}

type fileID struct{}

func idOf(os.FileInfo) (fileID, bool) { return fileID{}, false }

func ownedByUs(os.FileInfo) bool { return true }

func pidExists(int) bool { return false }
