package benchlibmlx5

import (
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// goSide runs post on a fresh runtime/sq writer and returns what it wrote.
func goSide(t testing.TB, post func(q *sq.SQ) error) Side {
	mem, err := NewMem()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	q, err := NewSQ(mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := post(q); err != nil {
		t.Fatal(err)
	}
	return Side{Mem: mem, CurPost: q.CurPost(), BFOff: q.BFOffset()}
}

// twinSides posts the same writes with two of the Go forms: they agree, as
// libmlx5 must agree with them.
func twinSides(t *testing.T) (Side, Side) {
	t.Helper()
	return goSide(t, func(q *sq.SQ) error { return PostWrites(q, 300, Batch) }),
		goSide(t, func(q *sq.SQ) error {
			var b Burst
			return b.PostBursts(q, 300, Batch)
		})
}

// TestSameFailsOnAByte shows that the byte check of the libmlx5 harness
// fails when one byte of the ring, the doorbell record or the doorbell
// register differs, and names where; and when the producer index or the
// register half differs.
func TestSameFailsOnAByte(t *testing.T) {
	a, b := twinSides(t)
	if err := Same("writes", a, b); err != nil {
		t.Fatalf("the per-call and burst forms disagree: %v", err)
	}
	for _, c := range []struct {
		name string
		buf  []byte
		i    int
		want string
	}{{"ring", b.Mem.SQ, 64*7 + 21, "ring byte 469 (WQEBB 7, offset 21)"}, {"doorbell record", b.Mem.DBR, 6, "doorbell record byte 6"},
		{"doorbell register", b.Mem.BF, 3, "doorbell register byte 3"}} {
		c.buf[c.i] ^= 0x10
		err := Same("writes", a, b)
		c.buf[c.i] ^= 0x10
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: a flipped byte gave %v, want an error naming %q", c.name, err, c.want)
		}
	}
	b.CurPost++
	if err := Same("writes", a, b); err == nil || !strings.Contains(err.Error(), "producer index") {
		t.Errorf("producer index: %v", err)
	}
	b.CurPost--
	b.BFOff ^= BFSize
	if err := Same("writes", a, b); err == nil || !strings.Contains(err.Error(), "register half") {
		t.Errorf("register half: %v", err)
	}
}

// TestMkeyTwinsAgree checks that the four-call and template Go twins of
// the mkey rows write the same configuration (libmlx5 is compared with
// both when the tree is there).
func TestMkeyTwinsAgree(t *testing.T) {
	conf := func(template bool) func(q *sq.SQ) error {
		return func(q *sq.SQ) error {
			m, err := NewMkeyConf()
			if err != nil {
				return err
			}
			if err := m.Configure(q, 1, 1); err != nil {
				return err
			}
			if template {
				return m.ConfigureTemplate(q, 10, 8)
			}
			return m.Configure(q, 10, 8)
		}
	}
	if err := Same("mkey", goSide(t, conf(false)), goSide(t, conf(true))); err != nil {
		t.Fatal(err)
	}
}

func TestBurstSize(t *testing.T) {
	var b Burst
	if err := b.PostBursts(nil, 1, 0); err == nil {
		t.Fatal("a burst of 0 was accepted")
	}
}
