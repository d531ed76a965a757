package gen_test

import (
	"os"

	"golang.org/x/sys/unix"
)

func flock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }
