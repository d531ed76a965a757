package gen

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
)

// stage makes the missing directories, writes and syncs every new file
// beside its target, and reserves a backup name for every file that will
// be moved aside. Nothing the previous output holds changes.
func (w *writer) stage() error {
	for _, d := range w.mkdirs {
		if err := w.fsys.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
		w.created = append(w.created, d)
		w.addDir(filepath.Dir(d))
	}
	for _, t := range w.targets {
		dir, base := filepath.Split(t.path)
		w.addDir(filepath.Clean(dir))
		if t.exists {
			f, err := w.fsys.CreateTemp(dir, "."+base+".mlx5gen-old-*")
			if err != nil {
				return fmt.Errorf("reserving a backup of %s: %w", t.path, err)
			}
			t.backup = f.Name()
			if err := f.Close(); err != nil {
				return fmt.Errorf("reserving a backup of %s: %w", t.path, err)
			}
		}
		if t.content != nil {
			if err := w.stageFile(t, dir, base); err != nil {
				return fmt.Errorf("writing %s: %w", t.path, err)
			}
		}
	}
	return nil
}

func (w *writer) addDir(d string) {
	if !contains(w.dirs, d) {
		w.dirs = append(w.dirs, d)
	}
}

// stageFile writes a target's content to a new temporary file and syncs it.
func (w *writer) stageFile(t *target, dir, base string) error {
	f, err := w.fsys.CreateTemp(dir, "."+base+".mlx5gen-new-*")
	if err != nil {
		return err
	}
	t.tmp = f.Name()
	_, err = f.Write(t.content)
	if err == nil {
		err = f.Chmod(t.mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// commit moves every previous file aside and every new one into place,
// then syncs the directories. On a failure it rolls back and returns the
// failure with anything the rollback could not undo.
func (w *writer) commit() error {
	var err error
	for _, t := range w.targets {
		if t.exists {
			if err = w.fsys.Rename(t.path, t.backup); err != nil {
				err = fmt.Errorf("moving %s aside: %w", t.path, err)
				break
			}
			t.movedAside = true
		}
		if t.content != nil {
			if err = w.fsys.Rename(t.tmp, t.path); err != nil {
				err = fmt.Errorf("renaming %s to %s: %w", t.tmp, t.path, err)
				break
			}
			t.placed, t.tmp = true, ""
		}
	}
	if err == nil {
		err = w.syncDirs()
	}
	if err == nil {
		return nil
	}
	if rerr := w.rollback(); rerr != nil {
		// The journal stays: the next run finishes the rollback.
		return errors.Join(err, rerr)
	}
	if rerr := w.fsys.Remove(w.journal); rerr != nil {
		return errors.Join(err, fmt.Errorf("could not remove the journal %s: %w", w.journal, rerr))
	}
	return err
}

func (w *writer) syncDirs() error {
	for _, d := range w.dirs {
		if err := w.fsys.SyncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("syncing directory %s: %w", d, err)
		}
	}
	return nil
}

// rollback puts every previous file back where it was, then discards what
// the run created.
func (w *writer) rollback() error {
	var errs []error
	for i := len(w.targets) - 1; i >= 0; i-- {
		t := w.targets[i]
		switch {
		case t.movedAside:
			// Renaming the backup back replaces the new file, if placed.
			if err := w.fsys.Rename(t.backup, t.path); err != nil {
				errs = append(errs, fmt.Errorf("could not restore %s: the previous file is %s: %w", t.path, t.backup, err))
				continue
			}
			t.movedAside, t.placed, t.backup = false, false, ""
		case t.placed:
			if err := w.fsys.Remove(t.path); err != nil {
				errs = append(errs, fmt.Errorf("could not remove the new %s: %w", t.path, err))
				continue
			}
			t.placed = false
		}
	}
	errs = append(errs, w.discard())
	if err := w.syncDirs(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// discard removes the staged files, the unused backup names and the
// directories the run made.
func (w *writer) discard() error {
	var errs []error
	remove := func(path string) {
		if err := w.fsys.Remove(path); err != nil {
			errs = append(errs, fmt.Errorf("could not remove %s: %w", path, err))
		}
	}
	for _, t := range w.targets {
		if t.tmp != "" {
			remove(t.tmp)
			t.tmp = ""
		}
		if t.backup != "" && !t.movedAside {
			remove(t.backup)
			t.backup = ""
		}
	}
	for i := len(w.created) - 1; i >= 0; i-- {
		remove(w.created[i])
	}
	w.created = nil
	return errors.Join(errs...)
}

// finish removes the previous files, now that the new output is in place.
func (w *writer) finish() *Report {
	r := &Report{}
	for _, t := range w.targets {
		if t.content != nil {
			r.Written = append(r.Written, t.path)
		} else {
			r.Removed = append(r.Removed, t.path)
		}
		if t.movedAside {
			if err := w.fsys.Remove(t.backup); err != nil {
				r.Leftover = append(r.Leftover, t.backup)
			}
		}
	}
	sort.Strings(r.Removed)
	return r
}
