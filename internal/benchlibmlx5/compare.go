package benchlibmlx5

import (
	"fmt"

	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// Side is what one writer left: its queue memory, producer index and the
// half of the doorbell register it rings next.
type Side struct {
	Mem     *qmem.Memory
	CurPost uint32
	BFOff   int
}

// Same reports the first difference between what libmlx5 (lib) and
// runtime/sq (gosq) wrote on the path named path: the ring, the doorbell
// record, the doorbell register (the 8-byte doorbells and BlueFlame
// copies), the producer index and the next register half. A figure of a
// path is only worth taking when it is nil.
func Same(path string, lib, gosq Side) error {
	for _, r := range []struct {
		name string
		a, b []byte
	}{{"ring", lib.Mem.SQ, gosq.Mem.SQ}, {"doorbell record", lib.Mem.DBR, gosq.Mem.DBR}, {"doorbell register", lib.Mem.BF, gosq.Mem.BF}} {
		if len(r.a) != len(r.b) {
			return fmt.Errorf("%s: %s: libmlx5 has %d bytes, runtime/sq %d", path, r.name, len(r.a), len(r.b))
		}
		for i := range r.a {
			if r.a[i] != r.b[i] {
				return fmt.Errorf("%s: %s byte %d (WQEBB %d, offset %d): libmlx5 wrote %#02x, runtime/sq %#02x",
					path, r.name, i, i/64, i%64, r.a[i], r.b[i])
			}
		}
	}
	if lib.CurPost != gosq.CurPost {
		return fmt.Errorf("%s: producer index: libmlx5 %d, runtime/sq %d", path, lib.CurPost, gosq.CurPost)
	}
	if lib.BFOff != gosq.BFOff {
		return fmt.Errorf("%s: next doorbell register half: libmlx5 %d, runtime/sq %d", path, lib.BFOff, gosq.BFOff)
	}
	return nil
}
