package gen

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
)

// JournalName is the file in the output directory that lists an
// unfinished commit's moves; the next run repairs from it.
const JournalName = ".mlx5gen-journal"

// journal is what a commit is about to do, written and synced before the
// first rename.
type journal struct {
	Created []string `json:"created,omitempty"` // directories made, parents first
	Moves   []move   `json:"moves"`
}

// move is one target: its previous file goes to Backup (when Old is set),
// the staged file Staged to Target (when New is set).
type move struct {
	Target string `json:"target"`
	Staged string `json:"staged,omitempty"`
	Backup string `json:"backup,omitempty"`
	New    string `json:"new,omitempty"` // SHA-256 of the new content
	Old    string `json:"old,omitempty"` // SHA-256 of the previous file
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// writeJournal writes and syncs the journal of w's commit into dir.
func (w *writer) writeJournal(dir string) error {
	j := journal{Created: w.created}
	for _, t := range w.targets {
		m := move{Target: t.path, Staged: t.tmp, Backup: t.backup}
		if t.content != nil {
			m.New = sum(t.content)
		}
		if t.exists {
			m.Old = t.oldSum
		}
		j.Moves = append(j.Moves, m)
	}
	b, err := json.MarshalIndent(j, "", "\t")
	if err != nil {
		return err
	}
	f, err := w.fsys.CreateTemp(dir, JournalName+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing the journal in %s: %w", dir, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.fsys.Rename(f.Name(), filepath.Join(dir, JournalName))
	}
	if err == nil {
		err = w.fsys.SyncDir(dir)
	}
	if err != nil {
		w.fsys.Remove(f.Name())
		w.fsys.Remove(filepath.Join(dir, JournalName))
		return fmt.Errorf("writing the journal %s: %w", filepath.Join(dir, JournalName), err)
	}
	w.journal = filepath.Join(dir, JournalName)
	return nil
}

// fileSum is the SHA-256 of the regular file at path, or "" when there is
// none (or it cannot be read).
func (w *writer) fileSum(path string) string {
	fi, err := w.fsys.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	f, err := w.fsys.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return ""
	}
	return sum(b)
}

func (w *writer) exists(path string) bool {
	_, err := w.fsys.Lstat(path)
	return err == nil
}

// repair finishes the commit a killed run left in dir (its journal): it
// rolls forward when every staged file is still there or in place, else
// back, then removes the journal and every temporary file of an earlier
// run in dirs. It returns what it did ("" when there was nothing to do).
func (w *writer) repair(dir string, dirs []string) (string, error) {
	name := filepath.Join(dir, JournalName)
	var j journal
	var did string
	b, err := w.readJournal(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", err
	default:
		if err := json.Unmarshal(b, &j); err != nil {
			return "", fmt.Errorf("%s: %v; an interrupted run cannot be repaired: compare the output with its .mlx5gen-old-* files, then remove the journal", name, err)
		}
		if w.canRollForward(j) {
			err, did = w.rollForward(j), "rolled forward"
		} else {
			err, did = w.rollBack(j), "rolled back"
		}
		if err != nil {
			return "", fmt.Errorf("repairing the interrupted run of %s: %w", name, err)
		}
		for _, m := range j.Moves {
			dirs = append(dirs, filepath.Dir(m.Target))
		}
	}
	n, err := w.removeTemps(dirs)
	if err != nil {
		return "", err
	}
	if did != "" {
		if err := w.fsys.Remove(name); err != nil {
			return "", fmt.Errorf("removing the journal %s: %w", name, err)
		}
		did = fmt.Sprintf("repaired the run interrupted in %s: %s", dir, did)
	} else if n > 0 {
		did = fmt.Sprintf("removed %d temporary files an interrupted run left in %s", n, dir)
	}
	return did, nil
}

func (w *writer) readJournal(name string) ([]byte, error) {
	fi, err := w.fsys.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	f, err := w.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 16<<20))
}

func (w *writer) canRollForward(j journal) bool {
	for _, m := range j.Moves {
		if m.New != "" && !w.exists(m.Staged) && w.fileSum(m.Target) != m.New {
			return false
		}
	}
	return true
}

func (w *writer) rollForward(j journal) error {
	for _, m := range j.Moves {
		switch {
		case m.New != "" && w.exists(m.Staged):
			if err := w.fsys.Rename(m.Staged, m.Target); err != nil {
				return err
			}
		case m.New == "" && m.Old != "" && w.fileSum(m.Target) == m.Old:
			if err := w.fsys.Remove(m.Target); err != nil {
				return err
			}
		}
	}
	return w.syncAll(j)
}

func (w *writer) rollBack(j journal) error {
	for i := len(j.Moves) - 1; i >= 0; i-- {
		m := j.Moves[i]
		switch {
		case m.Old != "" && w.fileSum(m.Backup) == m.Old:
			if err := w.fsys.Rename(m.Backup, m.Target); err != nil {
				return err
			}
		case m.Old == "" && m.New != "" && w.fileSum(m.Target) == m.New:
			if err := w.fsys.Remove(m.Target); err != nil {
				return err
			}
		}
		for _, tmp := range []string{m.Staged, m.Backup} {
			if tmp != "" && w.exists(tmp) {
				if err := w.fsys.Remove(tmp); err != nil {
					return err
				}
			}
		}
	}
	for i := len(j.Created) - 1; i >= 0; i-- {
		w.fsys.Remove(j.Created[i]) // only if empty; a directory kept is harmless
	}
	return w.syncAll(j)
}

func (w *writer) syncAll(j journal) error {
	seen := map[string]bool{}
	for _, m := range j.Moves {
		if d := filepath.Dir(m.Target); !seen[d] {
			seen[d] = true
			if err := w.fsys.SyncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// isTemp says whether name is a temporary file of a run: a staged file,
// a backup or a journal being written.
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && (strings.Contains(name, ".mlx5gen-new-") || strings.Contains(name, ".mlx5gen-old-")) ||
		strings.HasPrefix(name, JournalName+".tmp-")
}

// removeTemps removes the temporary files of earlier runs in dirs (the
// lock is held, so no live run owns them) and returns how many.
func (w *writer) removeTemps(dirs []string) (int, error) {
	n := 0
	seen := map[string]bool{}
	for _, d := range dirs {
		if seen[d] {
			continue
		}
		seen[d] = true
		entries, err := w.fsys.ReadDir(d)
		if err != nil {
			continue // a directory that is not there holds nothing
		}
		for _, e := range entries {
			if !isTemp(e.Name()) || !e.Type().IsRegular() {
				continue
			}
			if err := w.fsys.Remove(filepath.Join(d, e.Name())); err != nil {
				return n, fmt.Errorf("removing %s, left by an interrupted run: %w", filepath.Join(d, e.Name()), err)
			}
			n++
		}
	}
	return n, nil
}

// Repair takes the lock on o.Dir and repairs what an interrupted run left
// in o's directories, as WriteOutput does before it writes; it says what
// it did ("" when nothing was left).
func Repair(fsys FS, o Output) (string, error) {
	lock, err := lockDir(o.Dir, o.Wait)
	if err != nil {
		return "", err
	}
	defer lock.unlock(false)
	w := &writer{fsys: fsys}
	return w.repair(o.Dir, o.dirs())
}
