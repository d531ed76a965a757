package gen

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// LockName is the lock file WriteOutput keeps in the output directory.
const LockName = ".mlx5gen.lock"

// LockTimeout bounds how long WriteOutput waits for another run writing
// the same output directory before it fails.
var LockTimeout = 2 * time.Minute

// dirLock is the advisory lock (flock) on an output directory.
type dirLock struct {
	f       *os.File
	created []string // directories made to hold the lock file, parents first
}

// lockDir takes the lock on dir, making dir if it is missing (made lists
// what it made, for unlock to remove on failure). It waits at most
// LockTimeout, telling wait once that it does.
func lockDir(dir string, wait func(lockFile string)) (*dirLock, error) {
	l := &dirLock{}
	if err := l.makeDir(filepath.Clean(dir)); err != nil {
		return nil, err
	}
	name := filepath.Join(dir, LockName)
	deadline := time.Now().Add(LockTimeout)
	told := false
	for {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o644)
		if err != nil {
			l.removeDirs()
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			// A run that made dir and failed removes the lock file: hold
			// the lock only on the file still at the path.
			held, herr := f.Stat()
			now, nerr := os.Lstat(name)
			if herr == nil && nerr == nil && os.SameFile(held, now) {
				l.f = f
				return l, nil
			}
			f.Close()
			continue
		}
		f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			l.removeDirs()
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		if time.Now().After(deadline) {
			l.removeDirs()
			return nil, fmt.Errorf("another mlx5gen run is writing %s (it holds %s); gave up after %v", dir, name, LockTimeout)
		}
		if !told && wait != nil {
			wait(name)
			told = true
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// makeDir makes dir and its missing parents, noting what it made.
func (l *dirLock) makeDir(dir string) error {
	if li, err := os.Lstat(dir); err == nil && li.Mode()&os.ModeSymlink != 0 {
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("%s is a symbolic link that leads nowhere: %v", dir, err)
		}
	}
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := l.makeDir(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("creating %s: %w", dir, err)
	} else if err == nil {
		l.created = append(l.created, dir)
	}
	return nil
}

// unlock releases the lock. After a failed run in a directory the lock
// made, the lock file and the directories go (if empty), so a failure
// leaves nothing behind.
func (l *dirLock) unlock(failed bool) {
	if failed && len(l.created) > 0 {
		os.Remove(l.f.Name())
		l.removeDirs()
	}
	l.f.Close() // closing releases the flock
}

func (l *dirLock) removeDirs() {
	for i := len(l.created) - 1; i >= 0; i-- {
		os.Remove(l.created[i])
	}
}
